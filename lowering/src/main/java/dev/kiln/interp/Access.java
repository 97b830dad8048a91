package dev.kiln.interp;

import dev.kiln.ir.Buffer;
import dev.kiln.ir.KilnException;
import java.util.Arrays;

/**
 * The address computation of one buffer access: one index per dimension, each checked against the
 * dimension's extent, then {@code sum(index[d] * stride[d])}. An index that is a plain variable is
 * read straight from its frame slot; any other index is a compiled node (often an affine one). The
 * first four dimensions live in scalar fields, so the common ranks need no array walks.
 */
final class Access {
    private static final int UNROLLED = 4;

    private final int rank;
    // dimension d < 4: slot of a plain-variable index (or -1), its node otherwise, extent, stride
    private final int s0, s1, s2, s3;
    private final LongNode i0, i1, i2, i3;
    private final long n0, n1, n2, n3;
    private final long t0, t1, t2, t3;
    // every dimension, for ranks above 4 and for error messages
    private final int[] varSlot;
    private final LongNode[] index;
    private final long[] shape;
    private final long[] strides;
    private final Buffer buffer;
    private final boolean store;
    private final String function;

    Access(
            Buffer buffer,
            long[] shape,
            long[] strides,
            int[] varSlot,
            LongNode[] index,
            boolean store,
            String function) {
        this.rank = shape.length;
        this.varSlot = varSlot;
        this.index = index;
        this.shape = shape;
        this.strides = strides;
        this.buffer = buffer;
        this.store = store;
        this.function = function;
        this.s0 = rank > 0 ? varSlot[0] : -1;
        this.s1 = rank > 1 ? varSlot[1] : -1;
        this.s2 = rank > 2 ? varSlot[2] : -1;
        this.s3 = rank > 3 ? varSlot[3] : -1;
        this.i0 = rank > 0 ? index[0] : null;
        this.i1 = rank > 1 ? index[1] : null;
        this.i2 = rank > 2 ? index[2] : null;
        this.i3 = rank > 3 ? index[3] : null;
        this.n0 = rank > 0 ? shape[0] : 0;
        this.n1 = rank > 1 ? shape[1] : 0;
        this.n2 = rank > 2 ? shape[2] : 0;
        this.n3 = rank > 3 ? shape[3] : 0;
        this.t0 = rank > 0 ? strides[0] : 0;
        this.t1 = rank > 1 ? strides[1] : 0;
        this.t2 = rank > 2 ? strides[2] : 0;
        this.t3 = rank > 3 ? strides[3] : 0;
    }

    /** The element offset, or a {@link KilnException} naming the buffer, the index and the dimension. */
    long offset(Frame f) {
        long[] ints = f.ints;
        return switch (rank) {
            case 0 -> 0;
            case 1 -> dim(f, ints, 0, s0, i0, n0) * t0;
            case 2 -> dim(f, ints, 0, s0, i0, n0) * t0 + dim(f, ints, 1, s1, i1, n1) * t1;
            case 3 ->
                dim(f, ints, 0, s0, i0, n0) * t0 + dim(f, ints, 1, s1, i1, n1) * t1 + dim(f, ints, 2, s2, i2, n2) * t2;
            case 4 ->
                dim(f, ints, 0, s0, i0, n0) * t0
                        + dim(f, ints, 1, s1, i1, n1) * t1
                        + dim(f, ints, 2, s2, i2, n2) * t2
                        + dim(f, ints, 3, s3, i3, n3) * t3;
            default -> offsetAnyRank(f, ints);
        };
    }

    private long dim(Frame f, long[] ints, int d, int slot, LongNode node, long extent) {
        long v = slot >= 0 ? ints[slot] : node.eval(f);
        if (v < 0 || v >= extent) throw outOfBounds(f, d, v);
        return v;
    }

    private long offsetAnyRank(Frame f, long[] ints) {
        long off = dim(f, ints, 0, s0, i0, n0) * t0
                + dim(f, ints, 1, s1, i1, n1) * t1
                + dim(f, ints, 2, s2, i2, n2) * t2
                + dim(f, ints, 3, s3, i3, n3) * t3;
        for (int d = UNROLLED; d < rank; d++) off += dim(f, ints, d, varSlot[d], index[d], shape[d]) * strides[d];
        return off;
    }

    private KilnException outOfBounds(Frame f, int bad, long badValue) {
        StringBuilder idx = new StringBuilder("[");
        for (int d = 0; d < rank; d++) {
            if (d > 0) idx.append(", ");
            if (d == bad) {
                idx.append(badValue);
                continue;
            }
            try {
                idx.append(varSlot[d] >= 0 ? f.ints[varSlot[d]] : index[d].eval(f));
            } catch (RuntimeException e) {
                idx.append('?');
            }
        }
        idx.append(']');
        return new KilnException("out-of-bounds " + (store ? "store to" : "load from") + " buffer '" + buffer.name()
                + "' (" + buffer.dtype() + Arrays.toString(shape) + ") in function '" + function + "': index " + idx
                + ", dimension " + bad + " index " + badValue + " is outside [0, " + shape[bad] + ")");
    }
}
