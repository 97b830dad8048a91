package dev.kiln.nn;

import dev.kiln.ir.DType;
import dev.kiln.ir.Expr;
import dev.kiln.ir.IntImm;
import dev.kiln.ir.IterVar;
import dev.kiln.ir.Reducer;
import dev.kiln.ir.Var;
import dev.kiln.te.Shape;
import dev.kiln.te.Te;
import dev.kiln.te.Tensor;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BiFunction;

/**
 * Reductions of a tensor over some of its axes, as numpy and TVM's topi define them:
 * {@code sum}, {@code max}, {@code min}, {@code mean} over a list of axes (an empty list means
 * every axis; negative axes count from the end), keeping the reduced axes as extent 1 when
 * {@code keepdims} is set; and {@code argmax}/{@code argmin} over one axis, which return int32
 * indices and pick the smallest index among ties.
 *
 * <p>Each reduction is one compute stage named after the operation and tagged {@code "reduce"}.
 * Reducing every axis without {@code keepdims} gives a rank-0 tensor.
 */
public final class Reduction {
    private Reduction() {}

    /** The tag of the stages built here. */
    public static final String TAG = "reduce";

    @Operator("Sum over `axes` (all when none), optionally keeping them as extent 1.")
    public static Tensor sum(Tensor x, int... axes) {
        return sum(x, false, axes);
    }

    /** {@code sum} over {@code axes} (all axes if none are given). */
    public static Tensor sum(Tensor x, boolean keepdims, int... axes) {
        Axes.requireNumeric("sum", x);
        return reduce("sum", x, keepdims, axes, Te::sum);
    }

    @Operator("Maximum over `axes` (all when none), optionally keeping them as extent 1.")
    public static Tensor max(Tensor x, int... axes) {
        return max(x, false, axes);
    }

    /** Maximum over {@code axes} (all axes if none are given). */
    public static Tensor max(Tensor x, boolean keepdims, int... axes) {
        Axes.requireNumeric("max", x);
        return reduce("max", x, keepdims, axes, Te::max);
    }

    @Operator("Minimum over `axes` (all when none), optionally keeping them as extent 1.")
    public static Tensor min(Tensor x, int... axes) {
        return min(x, false, axes);
    }

    /** Minimum over {@code axes} (all axes if none are given). */
    public static Tensor min(Tensor x, boolean keepdims, int... axes) {
        Axes.requireNumeric("min", x);
        return reduce("min", x, keepdims, axes, Te::min);
    }

    @Operator("Mean over `axes` (all when none), optionally keeping them as extent 1.")
    public static Tensor mean(Tensor x, int... axes) {
        return mean(x, false, axes);
    }

    /**
     * Mean over {@code axes} (all axes if none are given); floating types only. One stage:
     * the sum of {@code x * (1/n)}, n being the number of reduced elements.
     */
    public static Tensor mean(Tensor x, boolean keepdims, int... axes) {
        Axes.requireFloat("mean", x);
        int[] ax = axesOrAll("mean", x, axes);
        long n = 1;
        for (int a : ax) n *= x.dim(a);
        double inv = 1.0 / n;
        return reduce("mean", x, keepdims, ax, (rs, src) -> Te.sum(rs, src.mul(inv)));
    }

    /** Index of the largest element along {@code axis}, as int32; ties give the smallest index. */
    @Operator("Index of the largest element along `axis`, as int32; ties give the smallest index.")
    public static Tensor argmax(Tensor x, int axis) {
        return argmax(x, axis, false);
    }

    public static Tensor argmax(Tensor x, int axis, boolean keepdims) {
        return argReduce("argmax", x, axis, keepdims, true);
    }

    /** Index of the smallest element along {@code axis}, as int32; ties give the smallest index. */
    @Operator("Index of the smallest element along `axis`, as int32; ties give the smallest index.")
    public static Tensor argmin(Tensor x, int axis) {
        return argmin(x, axis, false);
    }

    public static Tensor argmin(Tensor x, int axis, boolean keepdims) {
        return argReduce("argmin", x, axis, keepdims, false);
    }

    /**
     * The two-value commutative reducer over (value, int32 index) behind argmax ({@code largest})
     * and argmin: the pair with the larger (smaller) value wins, and between equal values the
     * smaller index, so the result does not depend on the order of combination.
     */
    public static Reducer argReducer(DType valueType, boolean largest) {
        String name = largest ? "argmax" : "argmin";
        Expr identityValue = largest ? Reducer.lowest(valueType) : Reducer.highest(valueType);
        Expr identityIndex = IntImm.i32(Integer.MAX_VALUE);
        return Reducer.of(
                name,
                List.of(valueType, DType.INT32),
                (acc, nw) -> {
                    Var v0 = acc.get(0), i0 = acc.get(1), v1 = nw.get(0), i1 = nw.get(1);
                    Expr better = largest ? v1.gt(v0) : v1.lt(v0);
                    Expr take = better.or(v1.eq(v0).and(i1.lt(i0)));
                    return List.of(Te.select(take, v1, v0), Te.select(take, i1, i0));
                },
                List.of(identityValue, identityIndex));
    }

    private static Tensor argReduce(String op, Tensor x, int axis, boolean keepdims, boolean largest) {
        Axes.requireNonNull(op, "input", x);
        Axes.requireNumeric(op, x);
        int a = Axes.normalize(op, x, axis);
        int[] ax = {a};
        Reducer r = argReducer(x.dtype(), largest);
        Shape out = Axes.reducedShape(x.shape(), ax, keepdims);
        List<Tensor> outs = Te.computeMulti(op, out, idx -> {
            List<IterVar> rs = new ArrayList<>();
            List<Expr> in = inputIndex(x, ax, keepdims, idx, rs);
            return r.reduce(List.of(x.at(in), rs.get(0)), rs, IntImm.bool(true));
        });
        return outs.get(1);
    }

    private static Tensor reduce(
            String op, Tensor x, boolean keepdims, int[] axes, BiFunction<List<IterVar>, Expr, Expr> reducer) {
        int[] sorted = axesOrAll(op, x, axes);
        Shape out = Axes.reducedShape(x.shape(), sorted, keepdims);
        return Te.computeN(op, TAG, out, idx -> {
            List<IterVar> rs = new ArrayList<>();
            List<Expr> in = inputIndex(x, sorted, keepdims, idx, rs);
            return reducer.apply(rs, x.at(in));
        });
    }

    private static int[] axesOrAll(String op, Tensor x, int[] axes) {
        Axes.requireNonNull(op, "input", x);
        if (axes == null || axes.length == 0) {
            int[] all = new int[x.rank()];
            for (int d = 0; d < all.length; d++) all[d] = d;
            return all;
        }
        return Axes.normalizeAll(op, x, axes);
    }

    /**
     * The index of {@code x} read at output point {@code idx}: output axes for the kept axes and a
     * fresh reduce axis (appended to {@code reduceAxes}) for each reduced one.
     */
    static List<Expr> inputIndex(
            Tensor x, int[] sortedAxes, boolean keepdims, List<IterVar> idx, List<IterVar> reduceAxes) {
        List<Expr> in = new ArrayList<>();
        int o = 0;
        for (int d = 0; d < x.rank(); d++) {
            if (Axes.contains(sortedAxes, d)) {
                IterVar r = Te.reduceAxis(x.dim(d), "r" + d);
                reduceAxes.add(r);
                in.add(r);
                if (keepdims) o++;
            } else {
                in.add(idx.get(o++));
            }
        }
        return in;
    }
}
