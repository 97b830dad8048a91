package dev.kiln.graph;

import dev.kiln.ir.DType;
import dev.kiln.ir.KilnException;
import dev.kiln.nn.Activation;
import dev.kiln.nn.Conv;
import dev.kiln.nn.ConvParams;
import dev.kiln.nn.Elementwise;
import dev.kiln.nn.Indexing;
import dev.kiln.nn.Layout;
import dev.kiln.nn.Linalg;
import dev.kiln.nn.Logic;
import dev.kiln.nn.Norm;
import dev.kiln.nn.Operator;
import dev.kiln.nn.Pool;
import dev.kiln.nn.PoolParams;
import dev.kiln.nn.Quant;
import dev.kiln.nn.Reduction;
import dev.kiln.te.Tensor;
import java.util.List;

/**
 * An operator of a {@link Graph}: a call of the operator library ({@code dev.kiln.nn}) with its
 * attributes. Each is a record, so two nodes with equal attributes have equal ops; {@link #build}
 * makes the op's tensors from its input tensors, which gives shape inference, the reference run and
 * the ComputeDAG of every fused group from one definition.
 */
public sealed interface Op {

    /** The op's name in printouts and messages ("conv2d", "add"). */
    String kind();

    /** How many inputs it takes; -1 for any number of at least one. */
    int arity();

    /** What fusion may do with it (TVM's pattern). */
    OpPattern pattern();

    /** The op's output, computed from {@code inputs} through the operator library. */
    Tensor build(List<Tensor> inputs);

    /** Input positions that are weights: when constant, their layout may be rewritten for the tuned kernel. */
    default List<Integer> weightInputs() {
        return List.of();
    }

    /** The attributes, as printed ("" when none). */
    default String attrs() {
        return "";
    }

    // ---- complex ops (anchors of fusion) -----------------------------------------------------

    /**
     * 2-D convolution. {@code layout} "NHWC" (weight HWIO = [KH, KW, CI/groups, CO]) or "NCHW"
     * (weight OIHW); {@code pads} = [top, left, bottom, right]. Depthwise is {@code groups} = channels.
     */
    @Operator("2-D convolution, NHWC or NCHW, with strides, pads, dilations and groups (depthwise: groups = channels).")
    record Conv2d(String layout, List<Long> strides, List<Long> pads, List<Long> dilations, long groups) implements Op {
        public Conv2d {
            strides = List.copyOf(strides);
            pads = List.copyOf(pads);
            dilations = List.copyOf(dilations);
            if (!layout.equals("NHWC") && !layout.equals("NCHW")) {
                throw new KilnException("conv2d: layout must be NHWC or NCHW, got '" + layout + "'");
            }
            if (strides.size() != 2 || pads.size() != 4 || dilations.size() != 2) {
                throw new KilnException(
                        "conv2d: needs 2 strides, 4 pads (top, left, bottom, right) and 2 dilations, got " + strides
                                + ", " + pads + ", " + dilations);
            }
            if (groups < 1) throw new KilnException("conv2d: groups must be at least 1, got " + groups);
        }

        /** Square stride and symmetric padding, dilation 1. */
        public static Conv2d of(String layout, long stride, long pad, long groups) {
            return new Conv2d(layout, List.of(stride, stride), List.of(pad, pad, pad, pad), List.of(1L, 1L), groups);
        }

        public String kind() {
            return "conv2d";
        }

        public int arity() {
            return 2;
        }

        public OpPattern pattern() {
            return OpPattern.OUT_EWISE_FUSABLE;
        }

        public List<Integer> weightInputs() {
            return List.of(1);
        }

        public ConvParams params() {
            return new ConvParams(
                    strides, List.of(pads.get(0), pads.get(1)), List.of(pads.get(2), pads.get(3)), dilations, groups);
        }

        public Tensor build(List<Tensor> in) {
            return layout.equals("NHWC")
                    ? Conv.conv2dNhwc(in.get(0), in.get(1), params())
                    : Conv.conv2dNchw(in.get(0), in.get(1), params());
        }

        public String attrs() {
            return layout + " strides=" + strides + " pads=" + pads
                    + (dilations.equals(List.of(1L, 1L)) ? "" : " dilations=" + dilations)
                    + (groups == 1 ? "" : " groups=" + groups);
        }
    }

    /**
     * A convolution of any spatial rank in a named layout ({@code Conv.conv}: e.g. data "NCL" with
     * weight "OIL", or "NCDHW" with "OIDHW", as ONNX lays out 1-D and 3-D convolutions), or, when
     * {@code transposed}, a transposed convolution ({@code ConvTranspose.convTranspose}: weight
     * "IOHW", with {@code outputPadding}).
     */
    @Operator("Convolution of any rank and layout (ONNX Conv), or a transposed convolution (ONNX ConvTranspose).")
    record ConvNd(
            String dataLayout, String kernelLayout, ConvParams params, boolean transposed, List<Long> outputPadding)
            implements Op {
        public ConvNd {
            outputPadding = List.copyOf(outputPadding);
        }

        public String kind() {
            return "conv" + params.strides().size() + "d" + (transposed ? "_transpose" : "");
        }

        public int arity() {
            return 2;
        }

        public OpPattern pattern() {
            return OpPattern.OUT_EWISE_FUSABLE;
        }

        public List<Integer> weightInputs() {
            return List.of(1);
        }

        public Tensor build(List<Tensor> in) {
            String name = kind() + "_" + dataLayout.toLowerCase(java.util.Locale.ROOT);
            return transposed
                    ? dev.kiln.nn.ConvTranspose.convTranspose(
                            name,
                            in.get(0),
                            in.get(1),
                            dataLayout,
                            kernelLayout,
                            params,
                            outputPadding.stream().mapToLong(Long::longValue).toArray())
                    : Conv.conv(name, in.get(0), in.get(1), dataLayout, kernelLayout, params);
        }

        public String attrs() {
            return dataLayout + "/" + kernelLayout + " strides=" + params.strides() + " pads=" + params.padBefore()
                    + params.padAfter()
                    + " dilations=" + params.dilations() + (params.groups() == 1 ? "" : " groups=" + params.groups())
                    + (outputPadding.stream().allMatch(p -> p == 0) ? "" : " output_padding=" + outputPadding);
        }
    }

    /** {@code out[n, u] = sum_k x[n, k] * w[u, k]}: x [N, K], w [units, K]. */
    @Operator("`out[n, u] = sum_k x[n, k] * w[u, k]` for x [N, K] and w [units, K].")
    record Dense() implements Op {
        public String kind() {
            return "dense";
        }

        public int arity() {
            return 2;
        }

        public OpPattern pattern() {
            return OpPattern.OUT_EWISE_FUSABLE;
        }

        public List<Integer> weightInputs() {
            return List.of(1);
        }

        public Tensor build(List<Tensor> in) {
            return Linalg.dense(in.get(0), in.get(1));
        }
    }

    /** Batched matmul of [B, M, K] x [B, K, N], either operand optionally transposed in its last two axes. */
    @Operator("Batched matmul [B, M, K] x [B, K, N], either operand optionally transposed.")
    record BatchMatmul(boolean transposeA, boolean transposeB) implements Op {
        public String kind() {
            return "batch_matmul";
        }

        public int arity() {
            return 2;
        }

        public OpPattern pattern() {
            return OpPattern.OUT_EWISE_FUSABLE;
        }

        public List<Integer> weightInputs() {
            return List.of(1);
        }

        public Tensor build(List<Tensor> in) {
            return Linalg.batchMatmul(in.get(0), in.get(1), transposeA, transposeB);
        }

        public String attrs() {
            return (transposeA ? "transA " : "") + (transposeB ? "transB" : "");
        }
    }

    // ---- reductions --------------------------------------------------------------------------

    /** Max pooling over a 2-D window. */
    @Operator("Max pooling over a square 2-D window with symmetric padding.")
    record MaxPool2d(String layout, long kernel, long stride, long pad) implements Op {
        public String kind() {
            return "max_pool2d";
        }

        public int arity() {
            return 1;
        }

        public OpPattern pattern() {
            return OpPattern.COMM_REDUCE;
        }

        public Tensor build(List<Tensor> in) {
            PoolParams p = PoolParams.of(2, kernel, stride, pad);
            return layout.equals("NHWC") ? Pool.maxPool2dNhwc(in.get(0), p) : Pool.maxPool2dNchw(in.get(0), p);
        }

        public String attrs() {
            return layout + " kernel=" + kernel + " stride=" + stride + " pad=" + pad;
        }
    }

    /** Average pooling over a 2-D window. */
    @Operator("Average pooling over a square 2-D window with symmetric padding.")
    record AvgPool2d(String layout, long kernel, long stride, long pad, boolean countIncludePad) implements Op {
        public String kind() {
            return "avg_pool2d";
        }

        public int arity() {
            return 1;
        }

        public OpPattern pattern() {
            return OpPattern.COMM_REDUCE;
        }

        public Tensor build(List<Tensor> in) {
            PoolParams p = PoolParams.of(2, kernel, stride, pad);
            return layout.equals("NHWC")
                    ? Pool.avgPool2dNhwc(in.get(0), p, countIncludePad)
                    : Pool.avgPool2dNchw(in.get(0), p, countIncludePad);
        }

        public String attrs() {
            return layout + " kernel=" + kernel + " stride=" + stride + " pad=" + pad;
        }
    }

    /**
     * Max or average pooling over the spatial axes of {@code layout} ("NCL", "NHWC", "NCHW", "NCDHW", ...)
     * with any window: per-axis kernel, stride and dilation, and {@code pads} = [begin..., end...] (which
     * may differ, e.g. for ceil_mode). The square, symmetric 2-D windows have their own ops above.
     */
    @Operator("Max or average pooling over any number of spatial axes: per-axis window, stride, dilation and pads.")
    record PoolNd(
            String layout,
            boolean max,
            List<Long> kernel,
            List<Long> strides,
            List<Long> pads,
            List<Long> dilations,
            boolean countIncludePad)
            implements Op {
        public PoolNd {
            kernel = List.copyOf(kernel);
            strides = List.copyOf(strides);
            pads = List.copyOf(pads);
            dilations = List.copyOf(dilations);
            int s = layout.length() - 2;
            if (s < 1 || kernel.size() != s || strides.size() != s || dilations.size() != s || pads.size() != 2 * s) {
                throw new KilnException("pool: layout " + layout + " needs " + s + " kernel extents, strides and "
                        + "dilations and " + 2 * s + " pads, got " + kernel + ", " + strides + ", " + dilations + ", "
                        + pads);
            }
        }

        public String kind() {
            return (max ? "max_pool" : "avg_pool") + kernel.size() + "d";
        }

        public int arity() {
            return 1;
        }

        public OpPattern pattern() {
            return OpPattern.COMM_REDUCE;
        }

        public Tensor build(List<Tensor> in) {
            int s = kernel.size();
            PoolParams p = new PoolParams(kernel, strides, pads.subList(0, s), pads.subList(s, 2 * s), dilations);
            String name = kind() + "_" + layout.toLowerCase(java.util.Locale.ROOT);
            return max
                    ? Pool.maxPool(name, in.get(0), layout, p)
                    : Pool.avgPool(name, in.get(0), layout, p, countIncludePad);
        }

        public String attrs() {
            return layout + " kernel=" + kernel + " strides=" + strides + " pads=" + pads
                    + (dilations.stream().allMatch(d -> d == 1) ? "" : " dilations=" + dilations)
                    + (!max && countIncludePad ? " count_include_pad" : "");
        }
    }

    /** Max or average over every spatial axis of {@code layout}, which keep extent 1 (any rank). */
    @Operator("Max or average over every spatial axis of `layout` (any rank), kept as extent 1.")
    record GlobalPool(String layout, boolean max) implements Op {
        public String kind() {
            return max ? "global_max_pool" : "global_avg_pool";
        }

        public int arity() {
            return 1;
        }

        public OpPattern pattern() {
            return OpPattern.COMM_REDUCE;
        }

        public Tensor build(List<Tensor> in) {
            return Pool.globalPool(in.get(0), layout, max);
        }

        public String attrs() {
            return layout;
        }
    }

    /** Average over the whole spatial extent: [N, H, W, C] -> [N, 1, 1, C] (NHWC) or [N, C, 1, 1] (NCHW). */
    @Operator("Mean over the whole spatial extent.")
    record GlobalAvgPool2d(String layout) implements Op {
        public String kind() {
            return "global_avg_pool2d";
        }

        public int arity() {
            return 1;
        }

        public OpPattern pattern() {
            return OpPattern.COMM_REDUCE;
        }

        public Tensor build(List<Tensor> in) {
            return layout.equals("NHWC") ? Pool.globalAvgPool2dNhwc(in.get(0)) : Pool.globalAvgPool2dNchw(in.get(0));
        }

        public String attrs() {
            return layout;
        }
    }

    /** Mean over some axes. */
    @Operator("Mean over some axes.")
    record Mean(List<Integer> axes, boolean keepdims) implements Op {
        public Mean {
            axes = List.copyOf(axes);
        }

        public String kind() {
            return "mean";
        }

        public int arity() {
            return 1;
        }

        public OpPattern pattern() {
            return OpPattern.COMM_REDUCE;
        }

        public Tensor build(List<Tensor> in) {
            return Reduction.mean(
                    in.get(0),
                    keepdims,
                    axes.stream().mapToInt(Integer::intValue).toArray());
        }

        public String attrs() {
            return "axes=" + axes + (keepdims ? " keepdims" : "");
        }
    }

    /** Softmax over one axis. */
    @Operator("Softmax over one axis.")
    record Softmax(int axis) implements Op {
        public String kind() {
            return "softmax";
        }

        public int arity() {
            return 1;
        }

        public OpPattern pattern() {
            return OpPattern.COMM_REDUCE;
        }

        public Tensor build(List<Tensor> in) {
            return dev.kiln.nn.Softmax.softmax(in.get(0), axis);
        }

        public String attrs() {
            return "axis=" + axis;
        }
    }

    /** Layer norm over the last {@code axes} axes: inputs x, gamma, beta. */
    @Operator("Layer norm over the last `axes` axes: inputs x, gamma, beta.")
    record LayerNorm(int axes, double epsilon) implements Op {
        public String kind() {
            return "layer_norm";
        }

        public int arity() {
            return 3;
        }

        public OpPattern pattern() {
            return OpPattern.COMM_REDUCE;
        }

        public Tensor build(List<Tensor> in) {
            return Norm.layerNorm(in.get(0), in.get(1), in.get(2), axes, epsilon);
        }

        public String attrs() {
            return "axes=" + axes + " eps=" + epsilon;
        }
    }

    // ---- elementwise and broadcast -------------------------------------------------------------

    /**
     * Batch norm for inference: inputs x, mean, var, gamma, beta, channels on {@code axis}.
     * {@code GraphPasses} folds it into a preceding conv or dense, or turns it into a multiply and an add.
     */
    @Operator("Batch norm for inference: inputs x, mean, var, gamma, beta (folded away by the graph passes).")
    record BatchNorm(int axis, double epsilon) implements Op {
        public String kind() {
            return "batch_norm";
        }

        public int arity() {
            return 5;
        }

        public OpPattern pattern() {
            return OpPattern.BROADCAST;
        }

        public Tensor build(List<Tensor> in) {
            return Norm.batchNorm(in.get(0), axis, in.get(1), in.get(2), in.get(3), in.get(4), epsilon);
        }

        public String attrs() {
            return "axis=" + axis + " eps=" + epsilon;
        }
    }

    /** {@code x + bias[c]} with the rank-1 bias along {@code axis}. */
    @Operator("`x + bias[c]` with the rank-1 bias along `axis`.")
    record BiasAdd(int axis) implements Op {
        public String kind() {
            return "bias_add";
        }

        public int arity() {
            return 2;
        }

        public OpPattern pattern() {
            return OpPattern.BROADCAST;
        }

        public Tensor build(List<Tensor> in) {
            return Elementwise.biasAdd(in.get(0), in.get(1), axis);
        }

        public String attrs() {
            return "axis=" + axis;
        }
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

    /** A binary elementwise op with numpy broadcasting. */
    @Operator("A binary elementwise op with numpy broadcasting; comparisons and logical ones give bool.")
    record Binary(BinaryKind op) implements Op {
        public String kind() {
            return op.name().toLowerCase(java.util.Locale.ROOT);
        }

        public int arity() {
            return 2;
        }

        public OpPattern pattern() {
            return OpPattern.BROADCAST;
        }

        public Tensor build(List<Tensor> in) {
            Tensor a = in.get(0), b = in.get(1);
            return switch (op) {
                case ADD -> Elementwise.add(a, b);
                case SUBTRACT -> Elementwise.subtract(a, b);
                case MULTIPLY -> Elementwise.multiply(a, b);
                case DIVIDE -> Elementwise.divide(a, b);
                case MAXIMUM -> Elementwise.maximum(a, b);
                case MINIMUM -> Elementwise.minimum(a, b);
                case POWER -> Elementwise.power(a, b);
                case EQUAL -> Logic.equal(a, b);
                case LESS -> Logic.less(a, b);
                case LESS_EQUAL -> Logic.lessEqual(a, b);
                case GREATER -> Logic.greater(a, b);
                case GREATER_EQUAL -> Logic.greaterEqual(a, b);
                case AND -> Logic.and(a, b);
                case OR -> Logic.or(a, b);
                case XOR -> Logic.xor(a, b);
            };
        }
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

    /** A unary elementwise activation. */
    @Operator("A unary elementwise activation (relu, sigmoid, tanh, gelu, ...) or logical not.")
    record Unary(UnaryKind op) implements Op {
        public String kind() {
            return op.name().toLowerCase(java.util.Locale.ROOT);
        }

        public int arity() {
            return 1;
        }

        public OpPattern pattern() {
            return OpPattern.ELEMWISE;
        }

        public Tensor build(List<Tensor> in) {
            Tensor x = in.get(0);
            return switch (op) {
                case RELU -> Activation.relu(x);
                case SIGMOID -> Activation.sigmoid(x);
                case TANH -> Activation.tanh(x);
                case GELU -> Activation.gelu(x, false);
                case GELU_TANH -> Activation.gelu(x, true);
                case ERF -> Activation.erf(x);
                case SQRT -> Activation.sqrt(x);
                case NOT -> Logic.not(x);
            };
        }
    }

    /** {@code min(max(x, lo), hi)} (ReLU6 is clip(0, 6)). */
    @Operator("`min(max(x, lo), hi)` (ReLU6 is clip(0, 6)).")
    record Clip(double lo, double hi) implements Op {
        public String kind() {
            return "clip";
        }

        public int arity() {
            return 1;
        }

        public OpPattern pattern() {
            return OpPattern.ELEMWISE;
        }

        public Tensor build(List<Tensor> in) {
            return Activation.clip(in.get(0), lo, hi);
        }

        public String attrs() {
            return "[" + lo + ", " + hi + "]";
        }
    }

    // ---- injective ---------------------------------------------------------------------------

    /** The same elements in row-major order under a new shape (one extent may be -1). */
    @Operator("The same elements in row-major order under a new shape (one extent may be -1).")
    record Reshape(List<Long> shape) implements Op {
        public Reshape {
            shape = List.copyOf(shape);
        }

        public String kind() {
            return "reshape";
        }

        public int arity() {
            return 1;
        }

        public OpPattern pattern() {
            return OpPattern.INJECTIVE;
        }

        public Tensor build(List<Tensor> in) {
            return Layout.reshape(
                    in.get(0), shape.stream().mapToLong(Long::longValue).toArray());
        }

        public String attrs() {
            return shape.toString();
        }
    }

    /** Permutes the axes: output axis d is input axis perm[d]. */
    @Operator("Permutes the axes: output axis d is input axis perm[d].")
    record Transpose(List<Integer> perm) implements Op {
        public Transpose {
            perm = List.copyOf(perm);
        }

        public String kind() {
            return "transpose";
        }

        public int arity() {
            return 1;
        }

        public OpPattern pattern() {
            return OpPattern.INJECTIVE;
        }

        public Tensor build(List<Tensor> in) {
            return Layout.transpose(
                    in.get(0), perm.stream().mapToInt(Integer::intValue).toArray());
        }

        public String attrs() {
            return perm.toString();
        }
    }

    /**
     * Strided slice: {@code size[d]} elements of axis d from {@code begin[d]} in steps of {@code step[d]}
     * (the whole tensor in steps of 1 is an identity, which {@code RemoveIdentities} drops unless it
     * is a graph output: the ONNX importer gives one value a second output name with such a copy).
     */
    @Operator("`size[d]` elements of axis d from `begin[d]` in steps of `step[d]`.")
    record StridedSlice(List<Long> begin, List<Long> step, List<Long> size) implements Op {
        public StridedSlice {
            begin = List.copyOf(begin);
            step = List.copyOf(step);
            size = List.copyOf(size);
        }

        public String kind() {
            return "strided_slice";
        }

        public int arity() {
            return 1;
        }

        public OpPattern pattern() {
            return OpPattern.INJECTIVE;
        }

        public Tensor build(List<Tensor> in) {
            return Layout.stridedSlice(in.get(0), longs(begin), longs(step), longs(size));
        }

        public String attrs() {
            return "begin=" + begin + " step=" + step + " size=" + size;
        }

        private static long[] longs(List<Long> l) {
            return l.stream().mapToLong(Long::longValue).toArray();
        }
    }

    /** Joins its inputs along {@code axis}. */
    @Operator("Joins its inputs along `axis`.")
    record Concat(int axis) implements Op {
        public String kind() {
            return "concat";
        }

        public int arity() {
            return -1;
        }

        public OpPattern pattern() {
            return OpPattern.INJECTIVE;
        }

        public Tensor build(List<Tensor> in) {
            return Layout.concat(axis, in.toArray(Tensor[]::new));
        }

        public String attrs() {
            return "axis=" + axis;
        }
    }

    // ---- integers and quantisation -------------------------------------------------------------

    /** Elementwise type conversion to {@code to} (see {@code Quant.cast}). */
    @Operator("Elementwise type conversion to `to`.")
    record Cast(DType to) implements Op {
        public String kind() {
            return "cast";
        }

        public int arity() {
            return 1;
        }

        public OpPattern pattern() {
            return OpPattern.ELEMWISE;
        }

        public Tensor build(List<Tensor> in) {
            return Quant.cast(in.get(0), to);
        }

        public String attrs() {
            return "to=" + to;
        }
    }

    /** Inputs x (float32), scale, zero point (its dtype is the output's): round half to even, saturate. */
    @Operator("x (float32) / scale + zero point, rounded half to even and saturated to the zero point's type.")
    record Quantize() implements Op {
        public String kind() {
            return "quantize";
        }

        public int arity() {
            return 3;
        }

        public OpPattern pattern() {
            return OpPattern.BROADCAST;
        }

        public Tensor build(List<Tensor> in) {
            return Quant.quantize(in.get(0), in.get(1), in.get(2));
        }
    }

    /** Inputs x (integer), scale, zero point: {@code (x - zero) * scale} in float32. */
    @Operator("`(x - zero) * scale` in float32 for integer x.")
    record Dequantize() implements Op {
        public String kind() {
            return "dequantize";
        }

        public int arity() {
            return 3;
        }

        public OpPattern pattern() {
            return OpPattern.BROADCAST;
        }

        public Tensor build(List<Tensor> in) {
            return Quant.dequantize(in.get(0), in.get(1), in.get(2));
        }
    }

    /** Inputs acc (int32), multiplier (float32), zero point: an int32 accumulator back to 8 bits. */
    @Operator("An int32 accumulator times a float32 multiplier plus a zero point, back to 8 bits.")
    record Requantize() implements Op {
        public String kind() {
            return "requantize";
        }

        public int arity() {
            return 3;
        }

        public OpPattern pattern() {
            return OpPattern.BROADCAST;
        }

        public Tensor build(List<Tensor> in) {
            return Quant.requantize(in.get(0), in.get(1), in.get(2));
        }
    }

    /** Dense on 8-bit data accumulating in int32: inputs x [N, K], w [units, K], x zero point, w zero point. */
    @Operator("Dense on 8-bit data accumulating in int32, with zero points for x and w.")
    record DenseInteger() implements Op {
        public String kind() {
            return "dense_integer";
        }

        public int arity() {
            return 4;
        }

        public OpPattern pattern() {
            return OpPattern.OUT_EWISE_FUSABLE;
        }

        public List<Integer> weightInputs() {
            return List.of(1);
        }

        public Tensor build(List<Tensor> in) {
            return Quant.denseInteger(in.get(0), in.get(1), in.get(2), in.get(3));
        }
    }

    /** Gather along {@code axis} with indices computed at run time: inputs data, indices. */
    @Operator("Gather along `axis` with indices computed at run time: inputs data, indices.")
    record Take(int axis) implements Op {
        public String kind() {
            return "take";
        }

        public int arity() {
            return 2;
        }

        public OpPattern pattern() {
            return OpPattern.INJECTIVE;
        }

        public Tensor build(List<Tensor> in) {
            return Indexing.take(in.get(0), in.get(1), axis);
        }

        public String attrs() {
            return "axis=" + axis;
        }
    }

    /** {@code cond ? x : y} with broadcasting: inputs cond (bool), x, y. */
    @Operator("`cond ? x : y` with broadcasting: inputs cond (bool), x, y.")
    record Where() implements Op {
        public String kind() {
            return "where";
        }

        public int arity() {
            return 3;
        }

        public OpPattern pattern() {
            return OpPattern.BROADCAST;
        }

        public Tensor build(List<Tensor> in) {
            return Indexing.where(in.get(0), in.get(1), in.get(2));
        }
    }

    /** The input broadcast to {@code shape} (numpy rules; ONNX Expand). */
    @Operator("The input broadcast to `shape` (numpy rules; ONNX Expand).")
    record BroadcastTo(List<Long> shape) implements Op {
        public BroadcastTo {
            shape = List.copyOf(shape);
        }

        public String kind() {
            return "broadcast_to";
        }

        public int arity() {
            return 1;
        }

        public OpPattern pattern() {
            return OpPattern.BROADCAST;
        }

        public Tensor build(List<Tensor> in) {
            return Indexing.broadcastTo(
                    in.get(0), shape.stream().mapToLong(Long::longValue).toArray());
        }

        public String attrs() {
            return shape.toString();
        }
    }
}
