package dev.kiln.nn;

import dev.kiln.ir.Expr;
import dev.kiln.ir.IterVar;
import dev.kiln.ir.KilnException;
import dev.kiln.ir.Literals;
import dev.kiln.te.Shape;
import dev.kiln.te.Te;
import dev.kiln.te.Tensor;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BinaryOperator;

/**
 * Binary elementwise arithmetic with numpy-style broadcasting, and bias add.
 *
 * <p>Broadcasting aligns the two shapes at their last axis; the shorter one is padded with
 * leading axes of extent 1; along each axis the extents must be equal or one of them 1, and the
 * result takes the larger. Both operands must have the same dtype (Kiln never converts on its
 * own). Each operator is one compute stage named after it and tagged {@link #TAG}.
 */
public final class Elementwise {
    private Elementwise() {}

    /** The tag of the stages built here. */
    public static final String TAG = "broadcast";

    @Operator("`a + b` elementwise with numpy broadcasting.")
    public static Tensor add(Tensor a, Tensor b) {
        return binary("add", a, b, Expr::add);
    }

    @Operator("`a - b` elementwise with numpy broadcasting.")
    public static Tensor subtract(Tensor a, Tensor b) {
        return binary("subtract", a, b, Expr::sub);
    }

    @Operator("`a * b` elementwise with numpy broadcasting.")
    public static Tensor multiply(Tensor a, Tensor b) {
        return binary("multiply", a, b, Expr::mul);
    }

    /** True division; floating types only. */
    @Operator("`a / b` (true division) with broadcasting; floating types.")
    public static Tensor divide(Tensor a, Tensor b) {
        checkOperands("divide", a, b);
        Axes.requireFloat("divide", a);
        return binary("divide", a, b, Expr::div);
    }

    /** Elementwise maximum with broadcasting. */
    @Operator("Elementwise maximum with broadcasting.")
    public static Tensor maximum(Tensor a, Tensor b) {
        return binary("maximum", a, b, Expr::max);
    }

    /** {@code a ** b} with broadcasting; floating types only. */
    @Operator("`a ** b` with broadcasting; floating types.")
    public static Tensor power(Tensor a, Tensor b) {
        checkOperands("power", a, b);
        Axes.requireFloat("power", a);
        return binary("power", a, b, Te::pow);
    }

    /** Elementwise minimum with broadcasting. */
    @Operator("Elementwise minimum with broadcasting.")
    public static Tensor minimum(Tensor a, Tensor b) {
        return binary("minimum", a, b, Expr::min);
    }

    /**
     * {@code out = x + bias} with {@code bias} (rank 1) laid along {@code axis} of {@code x}:
     * {@code out[..., c, ...] = x[..., c, ...] + bias[c]} (axis 1 for NCHW, -1 for NHWC).
     */
    @Operator("`x + bias[c]` with the rank-1 bias laid along `axis` of x.")
    public static Tensor biasAdd(Tensor x, Tensor bias, int axis) {
        Axes.requireNonNull("bias_add", "input", x);
        Axes.requireNumeric("bias_add", x);
        int ax = Axes.normalize("bias_add", x, axis);
        Axes.requireVector("bias_add", "bias", bias, x, ax);
        return Te.computeN("bias_add", TAG, x.shape(), idx -> x.at(idx).add(bias.at(idx.get(ax))));
    }

    /** The shape of {@code op(a, b)} under broadcasting; throws naming both tensors and the axis. */
    public static Shape broadcastShape(String op, Tensor a, Tensor b) {
        int r = Math.max(a.rank(), b.rank());
        List<Long> dims = new ArrayList<>();
        for (int d = 0; d < r; d++) {
            int da = d - (r - a.rank());
            int db = d - (r - b.rank());
            long ea = da < 0 ? 1 : a.dim(da);
            long eb = db < 0 ? 1 : b.dim(db);
            if (ea != eb && ea != 1 && eb != 1) {
                throw new KilnException(op + ": cannot broadcast tensor " + Axes.describe(a) + " with tensor "
                        + Axes.describe(b) + ": at axis " + d + " of the result, axis " + da + " of '" + a.name()
                        + "' has extent " + ea + " but axis " + db + " of '" + b.name() + "' has extent " + eb
                        + " (extents must be equal or 1)");
            }
            dims.add(Math.max(ea, eb));
        }
        return new Shape(dims);
    }

    /** The read of {@code t} at output point {@code idx} of a broadcast result (size-1 axes read index 0). */
    static Expr broadcastRead(Tensor t, List<IterVar> idx) {
        int offset = idx.size() - t.rank();
        List<Expr> in = new ArrayList<>();
        for (int d = 0; d < t.rank(); d++) {
            IterVar o = idx.get(d + offset);
            in.add(t.dim(d) == 1 ? Literals.like(o, 0L) : o);
        }
        return t.at(in);
    }

    private static void checkOperands(String op, Tensor a, Tensor b) {
        Axes.requireNonNull(op, "first", a);
        Axes.requireNonNull(op, "second", b);
        Axes.requireNumeric(op, a);
        Axes.requireSameDType(op, a, b);
    }

    private static Tensor binary(String op, Tensor a, Tensor b, BinaryOperator<Expr> f) {
        checkOperands(op, a, b);
        Shape out = broadcastShape(op, a, b);
        return Te.computeN(op, TAG, out, idx -> f.apply(broadcastRead(a, idx), broadcastRead(b, idx)));
    }
}
