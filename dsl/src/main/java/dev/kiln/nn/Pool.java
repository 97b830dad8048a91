package dev.kiln.nn;

import dev.kiln.ir.DType;
import dev.kiln.ir.Expr;
import dev.kiln.ir.IterVar;
import dev.kiln.ir.KilnException;
import dev.kiln.ir.Literals;
import dev.kiln.ir.Reducer;
import dev.kiln.te.Shape;
import dev.kiln.te.Te;
import dev.kiln.te.Tensor;
import java.util.ArrayList;
import java.util.List;

/**
 * Max and average pooling over a sliding window (kernel, stride, per-side padding, dilation), and
 * global pooling over all spatial axes, in NCHW or NHWC (or any layout string with one N, one C
 * and spatial letters, through {@link #maxPool} and {@link #avgPool}).
 *
 * <p>Max pooling pads with the lowest value of the dtype (minus infinity for floats), so padding
 * never wins. Average pooling pads with zero, sums in a stage named "&lt;op&gt;_sum", and divides
 * in the output stage: by the window size when {@code countIncludePad} is true, else by the number
 * of window elements that fall inside the input, as PyTorch's {@code count_include_pad=False}.
 * A window lying wholly in the padding gives the lowest value (max) or zero (average). Global
 * pooling keeps the spatial axes with extent 1 ([N, C, 1, 1] for NCHW).
 */
public final class Pool {
    private Pool() {}

    // ---- max ------------------------------------------------------------------------------------

    @Operator("Max pooling over a 2-D window, NCHW.")
    public static Tensor maxPool2dNchw(Tensor x, PoolParams p) {
        return maxPool("max_pool2d_nchw", x, "NCHW", p);
    }

    /** Square window {@code kernel}, the given stride and symmetric padding. */
    public static Tensor maxPool2dNchw(Tensor x, long kernel, long stride, long pad) {
        return maxPool2dNchw(x, PoolParams.of(2, kernel, stride, pad));
    }

    @Operator("Max pooling over a 2-D window, NHWC.")
    public static Tensor maxPool2dNhwc(Tensor x, PoolParams p) {
        return maxPool("max_pool2d_nhwc", x, "NHWC", p);
    }

    /** Square window {@code kernel}, the given stride and symmetric padding. */
    public static Tensor maxPool2dNhwc(Tensor x, long kernel, long stride, long pad) {
        return maxPool2dNhwc(x, PoolParams.of(2, kernel, stride, pad));
    }

    /** Max pooling in any layout; the output is named and tagged {@code name}. */
    @Operator("Max pooling in any layout; the output is named and tagged `name`.")
    public static Tensor maxPool(String name, Tensor x, String layout, PoolParams p) {
        Window w = window(name, x, layout, p);
        Tensor padded = Pad.padIfNeeded(x, w.before, w.after, Reducer.lowest(x.dtype()));
        List<IterVar> r = w.reduceAxes();
        return Te.computeN(name, name, Shape.of(w.out), idx -> Te.max(r, padded.at(w.source(idx, r))));
    }

    // ---- average -------------------------------------------------------------------------------

    /** Average pooling NCHW; see the class comment for {@code countIncludePad}. */
    @Operator("Average pooling over a 2-D window, NCHW, counting the padding or not.")
    public static Tensor avgPool2dNchw(Tensor x, PoolParams p, boolean countIncludePad) {
        return avgPool("avg_pool2d_nchw", x, "NCHW", p, countIncludePad);
    }

    public static Tensor avgPool2dNchw(Tensor x, long kernel, long stride, long pad, boolean countIncludePad) {
        return avgPool2dNchw(x, PoolParams.of(2, kernel, stride, pad), countIncludePad);
    }

    /** Average pooling NHWC; see the class comment for {@code countIncludePad}. */
    @Operator("Average pooling over a 2-D window, NHWC, counting the padding or not.")
    public static Tensor avgPool2dNhwc(Tensor x, PoolParams p, boolean countIncludePad) {
        return avgPool("avg_pool2d_nhwc", x, "NHWC", p, countIncludePad);
    }

    public static Tensor avgPool2dNhwc(Tensor x, long kernel, long stride, long pad, boolean countIncludePad) {
        return avgPool2dNhwc(x, PoolParams.of(2, kernel, stride, pad), countIncludePad);
    }

    /** Average pooling in any layout (floating dtypes only); the output is named and tagged {@code name}. */
    @Operator("Average pooling in any layout (floating dtypes only); the output is named and tagged `name`.")
    public static Tensor avgPool(String name, Tensor x, String layout, PoolParams p, boolean countIncludePad) {
        requireFloat(name, x);
        Window w = window(name, x, layout, p);
        Tensor padded = Pad.padIfNeeded(x, w.before, w.after, Literals.of(x.dtype(), 0L));
        List<IterVar> r = w.reduceAxes();
        String sumName = name + "_sum";
        Tensor sum = Te.computeN(sumName, sumName, Shape.of(w.out), idx -> Te.sum(r, padded.at(w.source(idx, r))));
        boolean hasPad = false;
        long size = 1;
        for (int i = 0; i < w.spatial.length; i++) {
            hasPad |= p.padBefore(i) != 0 || p.padAfter(i) != 0;
            size *= p.kernel(i);
        }
        long windowSize = size;
        if (countIncludePad || !hasPad) {
            return Te.computeN(
                    name, name, Shape.of(w.out), idx -> sum.at(idx).div(Literals.of(x.dtype(), (double) windowSize)));
        }
        return Te.computeN(name, name, Shape.of(w.out), idx -> {
            Expr count = null;
            for (int i = 0; i < w.spatial.length; i++) {
                Expr c = validCount(
                        idx.get(w.spatial[i]),
                        x.dim(w.spatial[i]),
                        p.kernel(i),
                        p.stride(i),
                        p.padBefore(i),
                        p.dilation(i));
                count = count == null ? c : count.mul(c);
            }
            return sum.at(idx).div(count.max(1L).cast(x.dtype()));
        });
    }

    /**
     * How many of the window positions {@code start + k * d} ({@code start = o * stride - pad},
     * {@code 0 <= k < kernel}) fall inside {@code [0, in)}, at least 0.
     */
    private static Expr validCount(Expr o, long in, long kernel, long stride, long pad, long d) {
        Expr start = (stride == 1 ? o : o.mul(stride)).sub(pad);
        Expr count;
        if (d == 1) {
            count = start.add(kernel).min(in).sub(start.max(0L));
        } else {
            Expr first = start.neg().add(d - 1).floordiv(d).max(0L); // ceil(-start / d), at least 0
            Expr last = Literals.of(o.dtype(), in - 1).sub(start).floordiv(d).min(kernel - 1);
            count = last.sub(first).add(1L);
        }
        return count.max(0L);
    }

    // ---- global --------------------------------------------------------------------------------

    /** Max over H and W: [N, C, H, W] to [N, C, 1, 1]. */
    @Operator("Max over H and W: [N, C, H, W] to [N, C, 1, 1].")
    public static Tensor globalMaxPool2dNchw(Tensor x) {
        return global("global_max_pool2d_nchw", x, "NCHW", true);
    }

    /** Max over H and W: [N, H, W, C] to [N, 1, 1, C]. */
    @Operator("Max over H and W: [N, H, W, C] to [N, 1, 1, C].")
    public static Tensor globalMaxPool2dNhwc(Tensor x) {
        return global("global_max_pool2d_nhwc", x, "NHWC", true);
    }

    /** Mean over H and W: [N, C, H, W] to [N, C, 1, 1]. */
    @Operator("Mean over H and W: [N, C, H, W] to [N, C, 1, 1].")
    public static Tensor globalAvgPool2dNchw(Tensor x) {
        return global("global_avg_pool2d_nchw", x, "NCHW", false);
    }

    /** Mean over H and W: [N, H, W, C] to [N, 1, 1, C]. */
    @Operator("Mean over H and W: [N, H, W, C] to [N, 1, 1, C].")
    public static Tensor globalAvgPool2dNhwc(Tensor x) {
        return global("global_avg_pool2d_nhwc", x, "NHWC", false);
    }

    /**
     * Max or mean over every spatial axis of {@code layout} (any rank: "NCL", "NCDHW", ...), which become
     * extent 1; named {@code global_max_pool} or {@code global_avg_pool} followed by the layout.
     */
    @Operator("Max or mean over every spatial axis of `layout` (any rank), kept as extent 1.")
    public static Tensor globalPool(Tensor x, String layout, boolean isMax) {
        Axes.requireNonNull("global_pool", "input", x);
        String name = (isMax ? "global_max_pool_" : "global_avg_pool_") + layout.toLowerCase(java.util.Locale.ROOT);
        return global(name, x, layout, isMax);
    }

    private static Tensor global(String name, Tensor x, String layout, boolean isMax) {
        if (!isMax) requireFloat(name, x);
        ConvChecks.requireRank(name, "input", x, layout);
        int[] spatial = spatialAxes(name, layout);
        long[] out = x.shape().toArray();
        List<IterVar> r = new ArrayList<>();
        long size = 1;
        for (int s : spatial) {
            out[s] = 1;
            size *= x.dim(s);
            r.add(Te.reduceAxis(x.dim(s), "r" + Character.toLowerCase(layout.charAt(s))));
        }
        java.util.function.Function<List<IterVar>, List<Expr>> src = idx -> {
            List<Expr> i = new ArrayList<>(idx);
            for (int k = 0; k < spatial.length; k++) i.set(spatial[k], r.get(k));
            return i;
        };
        if (isMax) return Te.computeN(name, name, Shape.of(out), idx -> Te.max(r, x.at(src.apply(idx))));
        String sumName = name + "_sum";
        Tensor sum = Te.computeN(sumName, sumName, Shape.of(out), idx -> Te.sum(r, x.at(src.apply(idx))));
        long n = size;
        return Te.computeN(name, name, Shape.of(out), idx -> sum.at(idx).div(Literals.of(x.dtype(), (double) n)));
    }

    // ---- shared --------------------------------------------------------------------------------

    private static void requireFloat(String name, Tensor x) {
        DType t = x.dtype();
        if (!t.isFloat()) {
            throw new KilnException(
                    name + ": input '" + x.name() + "' is " + t + "; average pooling needs a floating dtype");
        }
    }

    private static int[] spatialAxes(String name, String layout) {
        if (layout.indexOf('N') < 0
                || layout.indexOf('C') < 0
                || layout.length() < 3
                || layout.chars().distinct().count() != layout.length()) {
            throw new KilnException(name + ": layout '" + layout
                    + "' needs one N, one C and at least one spatial letter, each at most once");
        }
        int[] s = new int[layout.length() - 2];
        int i = 0;
        for (int d = 0; d < layout.length(); d++) if (layout.charAt(d) != 'N' && layout.charAt(d) != 'C') s[i++] = d;
        return s;
    }

    /** The checked window of a pooling operator: output shape, padding arrays and spatial positions. */
    private record Window(String layout, int[] spatial, long[] out, long[] before, long[] after, PoolParams p) {
        List<IterVar> reduceAxes() {
            List<IterVar> r = new ArrayList<>();
            for (int i = 0; i < spatial.length; i++) {
                r.add(Te.reduceAxis(p.kernel(i), "r" + Character.toLowerCase(layout.charAt(spatial[i]))));
            }
            return r;
        }

        List<Expr> source(List<IterVar> idx, List<IterVar> r) {
            List<Expr> i = new ArrayList<>(idx);
            for (int k = 0; k < spatial.length; k++) {
                i.set(spatial[k], ConvChecks.window(idx.get(spatial[k]), p.stride(k), r.get(k), p.dilation(k)));
            }
            return i;
        }
    }

    private static Window window(String name, Tensor x, String layout, PoolParams p) {
        int[] spatial = spatialAxes(name, layout);
        ConvChecks.requireRank(name, "input", x, layout);
        if (p.spatialRank() != spatial.length) {
            throw new KilnException(name + ": the params give " + p.spatialRank() + " spatial axes but layout '"
                    + layout + "' has " + spatial.length);
        }
        long[] out = x.shape().toArray();
        long[] before = new long[x.rank()];
        long[] after = new long[x.rank()];
        for (int i = 0; i < spatial.length; i++) {
            String axis = String.valueOf(layout.charAt(spatial[i]));
            if (p.kernel(i) <= 0) {
                throw new KilnException(name + ": kernel size along " + axis + " must be positive, got " + p.kernel(i));
            }
            ConvChecks.checkAxis(name, axis, p.stride(i), p.dilation(i), p.padBefore(i), p.padAfter(i));
            out[spatial[i]] = ConvOutput.size(
                    name,
                    axis,
                    x.dim(spatial[i]),
                    p.kernel(i),
                    p.stride(i),
                    p.padBefore(i),
                    p.padAfter(i),
                    p.dilation(i));
            before[spatial[i]] = p.padBefore(i);
            after[spatial[i]] = p.padAfter(i);
        }
        return new Window(layout, spatial, out, before, after, p);
    }
}
