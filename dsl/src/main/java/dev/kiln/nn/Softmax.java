package dev.kiln.nn;

import dev.kiln.ir.Expr;
import dev.kiln.ir.IterVar;
import dev.kiln.te.Shape;
import dev.kiln.te.Te;
import dev.kiln.te.Tensor;
import java.util.ArrayList;
import java.util.List;

/**
 * Softmax and log-softmax over one axis (the last by default), in the numerically stable form
 * that subtracts the maximum first. Softmax is four stages, as in TVM's topi:
 * {@code softmax_max} (max-reduce), {@code softmax_exp} ({@code exp(x - max)}),
 * {@code softmax_sum} (sum-reduce) and {@code softmax} (the divide). Log-softmax is three:
 * {@code log_softmax_max}, {@code log_softmax_sum} (the sum of {@code exp(x - max)}) and
 * {@code log_softmax} ({@code x - max - log(sum)}). Floating types only.
 */
public final class Softmax {
    private Softmax() {}

    /** Softmax over the last axis. */
    @Operator("Softmax over the last axis.")
    public static Tensor softmax(Tensor x) {
        return softmax(x, -1);
    }

    /** Softmax over {@code axis} (negative counts from the end). */
    public static Tensor softmax(Tensor x, int axis) {
        String op = "softmax";
        int a = check(op, x, axis);
        Tensor max = reduceMax(op, x, a);
        Tensor e = Te.computeN(
                op + "_exp", "elemwise", x.shape(), idx -> Te.exp(x.at(idx).sub(max.at(drop(idx, a)))));
        Tensor sum = Te.computeN(op + "_sum", Reduction.TAG, max.shape(), idx -> {
            IterVar r = Te.reduceAxis(x.dim(a), "k");
            return Te.sum(r, e.at(insert(idx, a, r)));
        });
        return Te.computeN(op, op, x.shape(), idx -> e.at(idx).div(sum.at(drop(idx, a))));
    }

    /** Log-softmax over the last axis. */
    @Operator("Log-softmax over the last axis.")
    public static Tensor logSoftmax(Tensor x) {
        return logSoftmax(x, -1);
    }

    /** {@code x - max - log(sum(exp(x - max)))} over {@code axis}. */
    public static Tensor logSoftmax(Tensor x, int axis) {
        String op = "log_softmax";
        int a = check(op, x, axis);
        Tensor max = reduceMax(op, x, a);
        Tensor sum = Te.computeN(op + "_sum", Reduction.TAG, max.shape(), idx -> {
            IterVar r = Te.reduceAxis(x.dim(a), "k");
            return Te.sum(r, Te.exp(x.at(insert(idx, a, r)).sub(max.at(idx))));
        });
        return Te.computeN(op, op, x.shape(), idx -> {
            List<Expr> outer = drop(idx, a);
            return x.at(idx).sub(max.at(outer)).sub(Te.log(sum.at(outer)));
        });
    }

    private static int check(String op, Tensor x, int axis) {
        Axes.requireNonNull(op, "input", x);
        Axes.requireFloat(op, x);
        if (x.rank() == 0) Axes.requireMinRank(op, x, 1);
        return Axes.normalize(op, x, axis);
    }

    private static Tensor reduceMax(String op, Tensor x, int a) {
        Shape outer = Axes.reducedShape(x.shape(), new int[] {a}, false);
        return Te.computeN(op + "_max", Reduction.TAG, outer, idx -> {
            IterVar r = Te.reduceAxis(x.dim(a), "k");
            return Te.max(r, x.at(insert(idx, a, r)));
        });
    }

    /** The index without position {@code a}. */
    private static List<Expr> drop(List<IterVar> idx, int a) {
        List<Expr> out = new ArrayList<>(idx);
        out.remove(a);
        return out;
    }

    /** The index with {@code r} inserted at position {@code a}. */
    private static List<Expr> insert(List<IterVar> idx, int a, Expr r) {
        List<Expr> out = new ArrayList<>(idx);
        out.add(a, r);
        return out;
    }
}
