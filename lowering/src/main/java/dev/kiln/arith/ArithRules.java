package dev.kiln.arith;

import static dev.kiln.arith.Patterns.bin;
import static dev.kiln.arith.Patterns.isIntConst;
import static dev.kiln.arith.Patterns.lit;
import static dev.kiln.arith.Patterns.op;
import static dev.kiln.arith.Patterns.value;

import dev.kiln.ir.Binary;
import dev.kiln.ir.BinaryOp;
import dev.kiln.ir.DType;
import dev.kiln.ir.Expr;
import dev.kiln.ir.FloatImm;
import dev.kiln.ir.IntImm;

/**
 * Identities and canonical-form rules for arithmetic ({@code + - * / min max}). Each method is
 * one rule; it returns the rewritten node or null.
 *
 * <p><b>Integers</b> form a ring under wrapping + - * (modulo 2^bits), so reassociation,
 * distribution and cancellation are exact for them even when something overflows. One rule,
 * {@link #linearNormalize}, does all of that: it writes every integer sum, difference and
 * product with a constant as the canonical {@link LinearForm} (like terms combined, constants
 * folded and moved last as {@code x + c} or {@code x - c}, products with constants distributed,
 * zero terms dropped). It replaces the earlier small rules {@code add-zero}, {@code sub-zero},
 * {@code mul-one}, {@code mul-zero} and {@code const-right} for integer + and *,
 * {@code sub-self}, {@code add-const-fold}, {@code offset-sign}, {@code const-outward},
 * {@code add-sub-cancel}, {@code neg-add}, {@code like-terms}, {@code like-terms-nested},
 * {@code mul-const-fold} and {@code mul-distribute-offset}, whose results it reproduces.
 *
 * <p><b>Floats</b> are not associative, and IEEE has signed zeros, NaN and infinities. The only
 * float rules applied are those exact for every value: {@code x * 1.0 -> x}, {@code x / 1.0 -> x},
 * {@code x - (+0.0) -> x}, {@code x + (-0.0) -> x}, {@code min(x, x)}, {@code max(x, x)}, and
 * moving a constant to the right of + and * (IEEE + and * are commutative). Not applied:
 * {@code x + 0.0} (for x = -0.0 it gives +0.0), {@code x * 0.0} (NaN, infinities, -0.0),
 * {@code x - x} (NaN, infinities), and any reassociation such as {@code (x + 1) + 2}.
 */
final class ArithRules {
    private ArithRules() {}

    /**
     * {@code x + (-0.0) -> x}, {@code (-0.0) + x -> x} (floats only: for integers
     * {@link #linearNormalize} drops zero terms).
     */
    static Expr addZero(Binary b, Simplifier s) {
        if (b.op() != BinaryOp.ADD || !b.dtype().isFloat()) return null;
        if (isNegativeZero(b.b())) return b.a();
        if (isNegativeZero(b.a())) return b.b();
        return null;
    }

    private static boolean isNegativeZero(Expr e) {
        return e instanceof FloatImm f
                && Double.doubleToRawLongBits(ConstFold.value(f)) == Double.doubleToRawLongBits(-0.0);
    }

    /** {@code x - (+0.0) -> x} (floats only, and not {@code x - (-0.0)}: -0.0 - 0.0 is -0.0, -0.0 + 0.0 is +0.0). */
    static Expr subZero(Binary b, Simplifier s) {
        if (b.op() != BinaryOp.SUB) return null;
        boolean zero = b.b() instanceof FloatImm f && Double.doubleToRawLongBits(ConstFold.value(f)) == 0L;
        return zero ? b.a() : null;
    }

    /** {@code x * 1.0 -> x}, {@code 1.0 * x -> x} (floats only: x * 1.0 is x for every float; integers: linear). */
    static Expr mulOne(Binary b, Simplifier s) {
        if (b.op() != BinaryOp.MUL || !b.dtype().isFloat()) return null;
        if (isOne(b.b())) return b.a();
        if (isOne(b.a())) return b.b();
        return null;
    }

    private static boolean isOne(Expr e) {
        return e instanceof FloatImm f && ConstFold.value(f) == 1.0;
    }

    /**
     * The linear normal form of integer {@code + - *}: {@code ((f*4 + i) * 2 + j) - f*8 -> i*2 + j},
     * {@code (x + 3) + (y - 5) -> (x + y) - 2}, {@code x*3 - x*5 -> x * -2}, {@code (x + 2) * 3 -> x*3 + 6},
     * {@code 3 + x -> x + 3}, {@code 0 - y + x -> x - y}; see {@link LinearForm} for the form.
     * Exact with wrapping (a ring). A term whose coefficient becomes 0 is dropped unless it may
     * divide by zero ({@link Simplifier#canDrop}); such a term stays as {@code a * 0}.
     */
    static Expr linearNormalize(Binary b, Simplifier s) {
        if (!LinearForm.isLinearNode(b)) return null;
        Expr out = LinearForm.of(b).withoutZeros(s::canDrop).toExpr();
        return Patterns.same(out, b) ? null : out;
    }

    /** {@code floordiv(x, 1) -> x}, {@code truncdiv(x, 1) -> x}, {@code x / 1.0 -> x}. */
    static Expr divOne(Binary b, Simplifier s) {
        return switch (b.op()) {
            case FLOORDIV, TRUNCDIV -> isIntConst(b.b(), 1) ? b.a() : null;
            case DIV -> b.b() instanceof FloatImm f && ConstFold.value(f) == 1.0 ? b.a() : null;
            default -> null;
        };
    }

    /** {@code floormod(x, 1) -> 0}, {@code truncmod(x, 1) -> 0}. */
    static Expr modOne(Binary b, Simplifier s) {
        boolean mod = b.op() == BinaryOp.FLOORMOD || b.op() == BinaryOp.TRUNCMOD;
        return mod && isIntConst(b.b(), 1) && s.canDrop(b.a()) ? lit(b.dtype(), 0) : null;
    }

    /** {@code min(x, x) -> x}, {@code max(x, x) -> x}, for every type. */
    static Expr minMaxSelf(Binary b, Simplifier s) {
        return (b.op() == BinaryOp.MIN || b.op() == BinaryOp.MAX) && b.a().equals(b.b()) ? b.a() : null;
    }

    /**
     * {@code c + x -> x + c}, {@code c * x -> x * c} for floats (IEEE + and * are commutative;
     * integers: {@link #linearNormalize}); {@code min(c, x) -> min(x, c)} and the same for max
     * (integers only: float min/max of signed zeros is not symmetric on every backend).
     */
    static Expr constRight(Binary b, Simplifier s) {
        boolean commutes =
                switch (b.op()) {
                    case ADD, MUL -> b.dtype().isFloat();
                    case MIN, MAX -> b.dtype().isInt();
                    default -> false;
                };
        if (!commutes || !isConst(b.a()) || isConst(b.b())) return null;
        return bin(b.op(), b.b(), b.a());
    }

    private static boolean isConst(Expr e) {
        return e instanceof IntImm || e instanceof FloatImm;
    }

    /** {@code min(min(x, c1), c2) -> min(x, min(c1, c2))} and the same for max (integers). */
    static Expr minMaxConstFold(Binary b, Simplifier s) {
        if ((b.op() != BinaryOp.MIN && b.op() != BinaryOp.MAX) || !b.dtype().isInt() || !isIntConst(b.b())) {
            return null;
        }
        Binary a = op(b.a(), b.op());
        if (a == null || !isIntConst(a.b())) return null;
        long c1 = value(a.b()), c2 = value(b.b());
        DType t = b.dtype();
        return bin(b.op(), a.a(), lit(t, b.op() == BinaryOp.MIN ? Math.min(c1, c2) : Math.max(c1, c2)));
    }
}
