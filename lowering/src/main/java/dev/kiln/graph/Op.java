package dev.kiln.graph;

import dev.kiln.te.Tensor;
import java.util.List;

/**
 * An operator of a {@link Graph}: a call of the operator library ({@code dev.kiln.nn}) with its
 * attributes. Each is a record, so two nodes with equal attributes have equal ops; {@link #build}
 * makes the op's tensors from its input tensors, which gives shape inference, the reference run and
 * the ComputeDAG of every fused group from one definition.
 *
 * <p>The records are declared by family in the interfaces this one extends ({@link AnchorOps}, {@link ReductionOps},
 * {@link ElementwiseOps}, {@link LayoutOps}, {@link IntegerOps}) and named through it, {@code Op.Conv2d}, {@code
 * Op.Binary}, ..., since member types are inherited; the {@code permits} list keeps the operator table's order.
 * Only a single-type import must name the family ({@code import dev.kiln.graph.AnchorOps.Conv2d}); the kinds of the
 * binary and unary ops, which importers do import, stay here.
 *
 * <p>A record declares what is its own: its attributes (the record components, checked in the compact constructor,
 * printed by {@link #attrs}), {@link #build}, and, in the {@link OpSpec} it carries, its kind, arity, fusion
 * pattern and weight inputs, which the default methods below return.
 */
public sealed interface Op extends AnchorOps, ReductionOps, ElementwiseOps, LayoutOps, IntegerOps
        permits AnchorOps.Conv2d,
                AnchorOps.Conv2dWinograd,
                AnchorOps.Conv2dGemm,
                AnchorOps.ConvNd,
                AnchorOps.Dense,
                AnchorOps.BatchMatmul,
                ReductionOps.MaxPool2d,
                ReductionOps.AvgPool2d,
                ReductionOps.PoolNd,
                ReductionOps.GlobalPool,
                ReductionOps.GlobalAvgPool2d,
                ReductionOps.Mean,
                ReductionOps.Softmax,
                ReductionOps.LayerNorm,
                ElementwiseOps.BatchNorm,
                ElementwiseOps.BiasAdd,
                ElementwiseOps.Binary,
                ElementwiseOps.Unary,
                ElementwiseOps.Clip,
                LayoutOps.Reshape,
                LayoutOps.Transpose,
                LayoutOps.StridedSlice,
                LayoutOps.Concat,
                IntegerOps.Cast,
                IntegerOps.Quantize,
                IntegerOps.DynamicQuantParams,
                IntegerOps.Dequantize,
                IntegerOps.Requantize,
                IntegerOps.DenseInteger,
                IntegerOps.MatmulPacked,
                IntegerOps.Conv2dPacked,
                LayoutOps.Take,
                LayoutOps.Where,
                LayoutOps.BroadcastTo {

    /**
     * The op's name in printouts and messages ("conv2d", "add"): its {@link OpSpec#kind}, or, for an op whose name
     * depends on its attributes, the record's override.
     */
    default String kind() {
        return OpSpecs.of(getClass()).requireKind();
    }

    /** How many inputs it takes; -1 for any number of at least one ({@link OpSpec#arity}). */
    default int arity() {
        return OpSpecs.of(getClass()).arity();
    }

    /** What fusion may do with it (TVM's pattern; {@link OpSpec#pattern}). */
    default OpPattern pattern() {
        return OpSpecs.of(getClass()).pattern();
    }

    /** The op's output, computed from {@code inputs} through the operator library. */
    Tensor build(List<Tensor> inputs);

    /**
     * Input positions that are weights: when constant, their layout may be rewritten for the tuned kernel
     * ({@link OpSpec#weightInputs}).
     */
    default List<Integer> weightInputs() {
        return OpSpecs.of(getClass()).weightInputs();
    }

    /** The attributes, as printed ("" when none). */
    default String attrs() {
        return "";
    }

    /** The binary operators, with numpy broadcasting; comparisons and logical ones give bool. */
    enum BinaryKind {
        ADD,
        SUBTRACT,
        MULTIPLY,
        DIVIDE,
        MAXIMUM,
        MINIMUM,
        POWER,
        EQUAL,
        LESS,
        LESS_EQUAL,
        GREATER,
        GREATER_EQUAL,
        AND,
        OR,
        XOR
    }

    /** The unary activations, and logical not (on bool). */
    enum UnaryKind {
        RELU,
        SIGMOID,
        TANH,
        GELU,
        GELU_TANH,
        ERF,
        SQRT,
        NOT
    }
}
