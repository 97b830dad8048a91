package dev.kiln.nn;

import dev.kiln.ir.Expr;
import dev.kiln.ir.KilnException;
import dev.kiln.ir.Literals;
import dev.kiln.te.Te;
import dev.kiln.te.Tensor;
import java.util.function.UnaryOperator;

/**
 * Elementwise activation functions. Each is one compute stage of the input's shape and dtype,
 * named after the function and tagged {@link #TAG}, so the auto-scheduler can inline it into its
 * producer or consumer.
 */
public final class Activation {
    private Activation() {}

    /** The tag of the stages built here. */
    public static final String TAG = "elemwise";

    /** {@code max(x, 0)}; any numeric type. */
    @Operator("`max(x, 0)` elementwise; any numeric type.")
    public static Tensor relu(Tensor x) {
        Axes.requireNonNull("relu", "input", x);
        Axes.requireNumeric("relu", x);
        return map("relu", x, v -> v.max(Literals.like(v, 0L)));
    }

    /** {@code x > 0 ? x : alpha * x}; floating types only. */
    @Operator("`x > 0 ? x : alpha * x` elementwise; floating types.")
    public static Tensor leakyRelu(Tensor x, double alpha) {
        requireFloat("leaky_relu", x);
        return map("leaky_relu", x, v -> Te.select(v.gt(0), v, v.mul(alpha)));
    }

    /** The exact GELU, {@code x * 0.5 * (1 + erf(x / sqrt(2)))}. */
    @Operator("GELU, exact (`x * 0.5 * (1 + erf(x / sqrt(2)))`) or with the tanh approximation.")
    public static Tensor gelu(Tensor x) {
        return gelu(x, false);
    }

    /**
     * GELU, exact ({@code x * 0.5 * (1 + erf(x / sqrt(2)))}) or, with {@code tanhApproximation},
     * {@code 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3)))}.
     */
    public static Tensor gelu(Tensor x, boolean tanhApproximation) {
        requireFloat("gelu", x);
        if (tanhApproximation) {
            double c = Math.sqrt(2.0 / Math.PI);
            return map("gelu", x, v -> {
                Expr inner = v.add(v.mul(v).mul(v).mul(0.044715)).mul(c);
                return v.mul(0.5).mul(Te.tanh(inner).add(1.0));
            });
        }
        double invSqrt2 = 1.0 / Math.sqrt(2.0);
        return map("gelu", x, v -> v.mul(0.5).mul(Te.erf(v.mul(invSqrt2)).add(1.0)));
    }

    /** {@code 1 / (1 + exp(-x))}. */
    @Operator("`1 / (1 + exp(-x))` elementwise.")
    public static Tensor sigmoid(Tensor x) {
        requireFloat("sigmoid", x);
        return map("sigmoid", x, Te::sigmoid);
    }

    /** The Gauss error function. */
    @Operator("The Gauss error function, elementwise.")
    public static Tensor erf(Tensor x) {
        requireFloat("erf", x);
        return map("erf", x, Te::erf);
    }

    /** The square root. */
    @Operator("The square root, elementwise.")
    public static Tensor sqrt(Tensor x) {
        requireFloat("sqrt", x);
        return map("sqrt", x, Te::sqrt);
    }

    /** The hyperbolic tangent. */
    @Operator("The hyperbolic tangent, elementwise.")
    public static Tensor tanh(Tensor x) {
        requireFloat("tanh", x);
        return map("tanh", x, Te::tanh);
    }

    /**
     * {@code min(max(x, lo), hi)}; for integer tensors the bounds must be integral and fit the
     * type. Throws if {@code lo > hi}.
     */
    @Operator("`min(max(x, lo), hi)` elementwise (ReLU6 is clip(0, 6)).")
    public static Tensor clip(Tensor x, double lo, double hi) {
        Axes.requireNonNull("clip", "input", x);
        Axes.requireNumeric("clip", x);
        if (!(lo <= hi)) {
            throw new KilnException(
                    "clip: tensor " + Axes.describe(x) + " gets an empty range: lo " + lo + " > hi " + hi);
        }
        Expr l = bound(x, "lo", lo);
        Expr h = bound(x, "hi", hi);
        return map("clip", x, v -> v.max(l).min(h));
    }

    private static Expr bound(Tensor x, String role, double v) {
        try {
            return Literals.of(x.dtype(), v);
        } catch (KilnException e) {
            throw new KilnException(
                    "clip: bound " + role + " = " + v + " does not suit tensor " + Axes.describe(x) + " of type "
                            + x.dtype() + ": " + e.getMessage(),
                    e);
        }
    }

    private static void requireFloat(String op, Tensor x) {
        Axes.requireNonNull(op, "input", x);
        Axes.requireFloat(op, x);
    }

    private static Tensor map(String op, Tensor x, UnaryOperator<Expr> f) {
        return Te.computeN(op, TAG, x.shape(), idx -> f.apply(x.at(idx)));
    }
}
