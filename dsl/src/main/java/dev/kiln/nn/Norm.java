package dev.kiln.nn;

import dev.kiln.ir.Expr;
import dev.kiln.ir.IterVar;
import dev.kiln.ir.KilnException;
import dev.kiln.te.Shape;
import dev.kiln.te.Te;
import dev.kiln.te.Tensor;
import java.util.ArrayList;
import java.util.List;

/**
 * Normalisation layers. Batch norm is the inference form with stored statistics, one stage
 * {@code batch_norm}: {@code (x - mean[c]) / sqrt(var[c] + eps) * gamma[c] + beta[c]} with the
 * channel axis given (1 for NCHW, the last for NHWC). Layer norm normalises over the last
 * {@code k} axes in three stages: {@code layer_norm_mean} and {@code layer_norm_var} (reductions,
 * each the sum of its terms times {@code 1/n}) and {@code layer_norm}. Floating types only; every
 * parameter has the dtype of {@code x}.
 */
public final class Norm {
    private Norm() {}

    /** Batch norm (inference) of an NCHW tensor: channels on axis 1. */
    @Operator("Batch norm (inference) of an NCHW tensor: channels on axis 1.")
    public static Tensor batchNormNchw(Tensor x, Tensor mean, Tensor var, Tensor gamma, Tensor beta, double epsilon) {
        Axes.requireNonNull("batch_norm", "input", x);
        Axes.requireRank("batch_norm", x, 4);
        return batchNorm(x, 1, mean, var, gamma, beta, epsilon);
    }

    /** Batch norm (inference) of an NHWC tensor: channels on the last axis. */
    @Operator("Batch norm (inference) of an NHWC tensor: channels on the last axis.")
    public static Tensor batchNormNhwc(Tensor x, Tensor mean, Tensor var, Tensor gamma, Tensor beta, double epsilon) {
        Axes.requireNonNull("batch_norm", "input", x);
        Axes.requireRank("batch_norm", x, 4);
        return batchNorm(x, 3, mean, var, gamma, beta, epsilon);
    }

    /**
     * Batch norm (inference) with the channel axis {@code axis}: {@code mean}, {@code var},
     * {@code gamma} and {@code beta} are {@code [C]}, C the extent of that axis.
     */
    @Operator("Batch norm (inference) with the channel axis `axis`: `(x - mean) / sqrt(var + eps) * gamma + beta`.")
    public static Tensor batchNorm(
            Tensor x, int axis, Tensor mean, Tensor var, Tensor gamma, Tensor beta, double epsilon) {
        String op = "batch_norm";
        Axes.requireNonNull(op, "input", x);
        Axes.requireFloat(op, x);
        checkEpsilon(op, x, epsilon);
        int c = Axes.normalize(op, x, axis);
        Axes.requireVector(op, "mean", mean, x, c);
        Axes.requireVector(op, "var", var, x, c);
        Axes.requireVector(op, "gamma", gamma, x, c);
        Axes.requireVector(op, "beta", beta, x, c);
        return Te.computeN(op, op, x.shape(), idx -> {
            IterVar ch = idx.get(c);
            Expr centred = x.at(idx).sub(mean.at(ch));
            return centred.div(Te.sqrt(var.at(ch).add(epsilon)))
                    .mul(gamma.at(ch))
                    .add(beta.at(ch));
        });
    }

    /**
     * Layer norm over the last {@code normalizedAxes} axes: with {@code mean} and {@code var} taken
     * over those axes for each leading index,
     * {@code out = (x - mean) / sqrt(var + eps) * gamma + beta}, where {@code gamma} and
     * {@code beta} have the shape of the normalised axes.
     */
    @Operator("Layer norm over the last `normalizedAxes` axes: `(x - mean) / sqrt(var + eps) * gamma + beta`.")
    public static Tensor layerNorm(Tensor x, Tensor gamma, Tensor beta, int normalizedAxes, double epsilon) {
        String op = "layer_norm";
        Axes.requireNonNull(op, "input", x);
        Axes.requireFloat(op, x);
        checkEpsilon(op, x, epsilon);
        int r = x.rank();
        if (normalizedAxes < 1 || normalizedAxes > r) {
            throw new KilnException(op + ": cannot normalise over the last " + normalizedAxes + " axes of tensor "
                    + Axes.describe(x) + " of rank " + r + " (need 1 to " + r + ")");
        }
        int lead = r - normalizedAxes;
        Shape inner = new Shape(x.shape().dims().subList(lead, r));
        checkAffine(op, "gamma", gamma, x, inner);
        checkAffine(op, "beta", beta, x, inner);
        Shape outer = new Shape(x.shape().dims().subList(0, lead));
        double inv = 1.0 / inner.numElements();

        Tensor mean = Te.computeN(op + "_mean", Reduction.TAG, outer, idx -> {
            List<IterVar> rs = reduceAxes(inner, lead);
            return Te.sum(rs, x.at(concat(idx, rs)).mul(inv));
        });
        Tensor var = Te.computeN(op + "_var", Reduction.TAG, outer, idx -> {
            List<IterVar> rs = reduceAxes(inner, lead);
            Expr d = x.at(concat(idx, rs)).sub(mean.at(idx));
            return Te.sum(rs, d.mul(d).mul(inv));
        });
        return Te.computeN(op, op, x.shape(), idx -> {
            List<IterVar> o = idx.subList(0, lead);
            List<IterVar> in = idx.subList(lead, r);
            Expr centred = x.at(idx).sub(mean.at(o));
            return centred.div(Te.sqrt(var.at(o).add(epsilon)))
                    .mul(gamma.at(in))
                    .add(beta.at(in));
        });
    }

    private static void checkEpsilon(String op, Tensor x, double epsilon) {
        if (!(epsilon >= 0) || Double.isInfinite(epsilon)) {
            throw new KilnException(op + ": epsilon " + epsilon + " for tensor " + Axes.describe(x)
                    + " must be finite and non-negative");
        }
    }

    private static void checkAffine(String op, String role, Tensor p, Tensor x, Shape inner) {
        Axes.requireNonNull(op, role, p);
        if (!p.shape().equals(inner)) {
            throw new KilnException(op + ": " + role + " tensor " + Axes.describe(p) + " must have shape " + inner
                    + ", the last " + inner.rank() + " axes of tensor " + Axes.describe(x));
        }
        Axes.requireSameDType(op, x, p);
    }

    private static List<IterVar> reduceAxes(Shape inner, int lead) {
        List<IterVar> rs = new ArrayList<>();
        for (int d = 0; d < inner.rank(); d++) rs.add(Te.reduceAxis(inner.get(d), "r" + (lead + d)));
        return rs;
    }

    private static List<Expr> concat(List<IterVar> a, List<IterVar> b) {
        List<Expr> out = new ArrayList<>(a);
        out.addAll(b);
        return out;
    }
}
