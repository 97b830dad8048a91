package dev.kiln.nn;

import dev.kiln.ir.DType;
import dev.kiln.ir.Expr;
import dev.kiln.te.Shape;
import dev.kiln.te.Te;
import dev.kiln.te.Tensor;
import java.util.function.BinaryOperator;

/**
 * Comparisons and logical operators, elementwise with numpy-style broadcasting (the rules of
 * {@link Elementwise}); every result is {@code bool}.
 *
 * <p>A comparison takes two numeric tensors of one dtype (Kiln never converts on its own) and
 * compares them in that dtype: a float NaN compares unequal to everything, itself included, as in
 * IEEE 754 and ONNX. The logical operators take {@code bool} tensors. Each operator is one compute
 * stage named after it and tagged {@link Elementwise#TAG}, so fusion treats it as any broadcast op.
 */
public final class Logic {
    private Logic() {}

    /** {@code a == b}; on two bool tensors, whether they agree. */
    @Operator("`a == b` elementwise with broadcasting, as bool (on bool tensors: whether they agree).")
    public static Tensor equal(Tensor a, Tensor b) {
        if (a != null && b != null && a.dtype() == DType.BOOL && b.dtype() == DType.BOOL) {
            return logical("equal", a, b, (x, y) -> x.and(y).or(x.not().and(y.not())));
        }
        return compare("equal", a, b, Expr::eq);
    }

    /** {@code a < b}. */
    @Operator("`a < b` elementwise with broadcasting, as bool.")
    public static Tensor less(Tensor a, Tensor b) {
        return compare("less", a, b, Expr::lt);
    }

    /** {@code a <= b}. */
    @Operator("`a <= b` elementwise with broadcasting, as bool.")
    public static Tensor lessEqual(Tensor a, Tensor b) {
        return compare("less_equal", a, b, Expr::le);
    }

    /** {@code a > b}. */
    @Operator("`a > b` elementwise with broadcasting, as bool.")
    public static Tensor greater(Tensor a, Tensor b) {
        return compare("greater", a, b, Expr::gt);
    }

    /** {@code a >= b}. */
    @Operator("`a >= b` elementwise with broadcasting, as bool.")
    public static Tensor greaterEqual(Tensor a, Tensor b) {
        return compare("greater_equal", a, b, Expr::ge);
    }

    /** {@code a && b} on bool tensors. */
    @Operator("`a && b` on bool tensors with broadcasting.")
    public static Tensor and(Tensor a, Tensor b) {
        return logical("logical_and", a, b, Expr::and);
    }

    /** {@code a || b} on bool tensors. */
    @Operator("`a || b` on bool tensors with broadcasting.")
    public static Tensor or(Tensor a, Tensor b) {
        return logical("logical_or", a, b, Expr::or);
    }

    /** {@code a != b} on bool tensors (exclusive or). */
    @Operator("`a != b` on bool tensors with broadcasting (exclusive or).")
    public static Tensor xor(Tensor a, Tensor b) {
        return logical("logical_xor", a, b, (x, y) -> x.and(y.not()).or(x.not().and(y)));
    }

    /** {@code !x} on a bool tensor. */
    @Operator("`!x` on a bool tensor.")
    public static Tensor not(Tensor x) {
        Axes.requireNonNull("logical_not", "input", x);
        Axes.requireDType("logical_not", x, DType.BOOL);
        return Te.computeN(
                "logical_not", Elementwise.TAG, x.shape(), idx -> x.at(idx).not());
    }

    private static Tensor compare(String op, Tensor a, Tensor b, BinaryOperator<Expr> f) {
        Axes.requireNonNull(op, "first", a);
        Axes.requireNonNull(op, "second", b);
        Axes.requireNumeric(op, a);
        Axes.requireSameDType(op, a, b);
        return broadcast(op, a, b, f);
    }

    private static Tensor logical(String op, Tensor a, Tensor b, BinaryOperator<Expr> f) {
        Axes.requireNonNull(op, "first", a);
        Axes.requireNonNull(op, "second", b);
        Axes.requireDType(op, a, DType.BOOL);
        Axes.requireDType(op, b, DType.BOOL);
        return broadcast(op, a, b, f);
    }

    private static Tensor broadcast(String op, Tensor a, Tensor b, BinaryOperator<Expr> f) {
        Shape out = Elementwise.broadcastShape(op, a, b);
        return Te.computeN(
                op,
                Elementwise.TAG,
                out,
                idx -> f.apply(Elementwise.broadcastRead(a, idx), Elementwise.broadcastRead(b, idx)));
    }
}
