package dev.kiln.graph;

import static dev.kiln.graph.OpPattern.COMM_REDUCE;

import dev.kiln.ir.KilnException;
import dev.kiln.nn.Norm;
import dev.kiln.nn.Operator;
import dev.kiln.nn.Pool;
import dev.kiln.nn.PoolParams;
import dev.kiln.nn.Reduction;
import dev.kiln.te.Tensor;
import java.util.List;

/**
 * The reductions among the graph's operators: pools, mean, softmax and layer norm (TVM's
 * {@code COMM_REDUCE}).
 *
 * <p>A family of {@link Op}'s records: {@code Op} extends this interface, so its records are named
 * {@code Op.Softmax}, {@code Op.PoolNd}, ... as if they were declared in it (member types are inherited). Sealed,
 * with {@code Op} its only subtype: it has no members but the records, and nothing else implements it.
 */
public sealed interface ReductionOps permits Op {
    /** Max pooling over a 2-D window. */
    @Operator("Max pooling over a square 2-D window with symmetric padding.")
    @OpSpec(kind = "max_pool2d", arity = 1, pattern = COMM_REDUCE)
    record MaxPool2d(String layout, long kernel, long stride, long pad) implements Op {
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
    @OpSpec(kind = "avg_pool2d", arity = 1, pattern = COMM_REDUCE)
    record AvgPool2d(String layout, long kernel, long stride, long pad, boolean countIncludePad) implements Op {
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
    @OpSpec(arity = 1, pattern = COMM_REDUCE)
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
    @OpSpec(arity = 1, pattern = COMM_REDUCE)
    record GlobalPool(String layout, boolean max) implements Op {
        public String kind() {
            return max ? "global_max_pool" : "global_avg_pool";
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
    @OpSpec(kind = "global_avg_pool2d", arity = 1, pattern = COMM_REDUCE)
    record GlobalAvgPool2d(String layout) implements Op {
        public Tensor build(List<Tensor> in) {
            return layout.equals("NHWC") ? Pool.globalAvgPool2dNhwc(in.get(0)) : Pool.globalAvgPool2dNchw(in.get(0));
        }

        public String attrs() {
            return layout;
        }
    }

    /** Mean over some axes. */
    @Operator("Mean over some axes.")
    @OpSpec(kind = "mean", arity = 1, pattern = COMM_REDUCE)
    record Mean(List<Integer> axes, boolean keepdims) implements Op {
        public Mean {
            axes = List.copyOf(axes);
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
    @OpSpec(kind = "softmax", arity = 1, pattern = COMM_REDUCE)
    record Softmax(int axis) implements Op {
        public Tensor build(List<Tensor> in) {
            return dev.kiln.nn.Softmax.softmax(in.get(0), axis);
        }

        public String attrs() {
            return "axis=" + axis;
        }
    }

    /** Layer norm over the last {@code axes} axes: inputs x, gamma, beta. */
    @Operator("Layer norm over the last `axes` axes: inputs x, gamma, beta.")
    @OpSpec(kind = "layer_norm", arity = 3, pattern = COMM_REDUCE)
    record LayerNorm(int axes, double epsilon) implements Op {
        public Tensor build(List<Tensor> in) {
            return Norm.layerNorm(in.get(0), in.get(1), in.get(2), axes, epsilon);
        }

        public String attrs() {
            return "axes=" + axes + " eps=" + epsilon;
        }
    }
}
