package dev.kiln.graph;

/**
 * How an operator's output reads its inputs, which decides what fusion may merge (TVM's
 * {@code TOpPattern}, ../shared/reference/networks-notes.md §2.1). The order matters: a smaller
 * pattern is "simpler" and fuses more freely.
 */
public enum OpPattern {
    /** Output index = input index, same shape (relu, a binary op of equal shapes). */
    ELEMWISE,
    /** Output axes map in order onto the input axes, some of extent 1 (bias add, a residual add with broadcasting). */
    BROADCAST,
    /** Each output element reads one input element (reshape, transpose, concat, pad). */
    INJECTIVE,
    /** A commutative reduction (pooling, softmax, layer norm, mean). */
    COMM_REDUCE,
    /**
     * A complex op that takes elementwise epilogues but never chains with another complex op (conv, dense,
     * batch_matmul).
     */
    OUT_EWISE_FUSABLE,
    /** Never fused. */
    OPAQUE;

    /** Whether this pattern is elementwise or broadcast (what an anchor takes as its epilogue). */
    public boolean isEpilogue() {
        return this == ELEMWISE || this == BROADCAST;
    }

    /** Whether this pattern has no reduction and no data reuse (elementwise, broadcast or injective). */
    public boolean isLight() {
        return compareTo(INJECTIVE) <= 0;
    }
}
