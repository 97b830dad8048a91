package dev.kiln.arith;

import static dev.kiln.arith.Patterns.addOrSub;
import static dev.kiln.arith.Patterns.bin;
import static dev.kiln.arith.Patterns.isIntConst;
import static dev.kiln.arith.Patterns.lit;
import static dev.kiln.arith.Patterns.offset;
import static dev.kiln.arith.Patterns.op;
import static dev.kiln.arith.Patterns.sign;
import static dev.kiln.arith.Patterns.value;

import dev.kiln.arith.Patterns.Term;
import dev.kiln.ir.Binary;
import dev.kiln.ir.BinaryOp;
import dev.kiln.ir.DType;
import dev.kiln.ir.Expr;
import dev.kiln.ir.FloatImm;
import dev.kiln.ir.IntImm;

/**
 * Identities and canonical-form rules for arithmetic ({@code + - * / min max}). Each method is
 * one rule; it returns the rewritten node or null. The canonical form puts constants on the
 * right of commutative operators and moves constant offsets outward, written as {@code x + c} or
 * {@code x - c} with {@code c > 0}, so that offsets meet and fold.
 *
 * <p><b>Integers</b> form a ring under wrapping + - * (modulo 2^bits), so reassociation and
 * distribution are exact for them even when something overflows.
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

    /** {@code x + 0 -> x}, {@code 0 + x -> x} (integers); {@code x + (-0.0) -> x}, {@code (-0.0) + x -> x} (floats). */
    static Expr addZero(Binary b, Simplifier s) {
        if (b.op() != BinaryOp.ADD) return null;
        if (isAddIdentity(b.b())) return b.a();
        if (isAddIdentity(b.a())) return b.b();
        return null;
    }

    private static boolean isAddIdentity(Expr e) {
        return isIntConst(e, 0) || (e instanceof FloatImm f && isNegativeZero(ConstFold.value(f)));
    }

    private static boolean isNegativeZero(double v) {
        return Double.doubleToRawLongBits(v) == Double.doubleToRawLongBits(-0.0);
    }

    /** {@code x - 0 -> x} (integers); {@code x - (+0.0) -> x} (floats; -0.0 - 0.0 is -0.0). */
    static Expr subZero(Binary b, Simplifier s) {
        if (b.op() != BinaryOp.SUB) return null;
        boolean zero = isIntConst(b.b(), 0)
                || (b.b() instanceof FloatImm f && Double.doubleToRawLongBits(ConstFold.value(f)) == 0L);
        return zero ? b.a() : null;
    }

    /** {@code x * 1 -> x}, {@code 1 * x -> x} (integers and floats: x * 1.0 is x for every float). */
    static Expr mulOne(Binary b, Simplifier s) {
        if (b.op() != BinaryOp.MUL) return null;
        if (isOne(b.b())) return b.a();
        if (isOne(b.a())) return b.b();
        return null;
    }

    private static boolean isOne(Expr e) {
        return isIntConst(e, 1) || (e instanceof FloatImm f && ConstFold.value(f) == 1.0);
    }

    /**
     * {@code x * 0 -> 0}, {@code 0 * x -> 0}, integers only. Not for floats: NaN * 0 and inf * 0
     * are NaN, and -1.0 * 0.0 is -0.0.
     */
    static Expr mulZero(Binary b, Simplifier s) {
        if (b.op() != BinaryOp.MUL || !b.dtype().isInt()) return null;
        if (isIntConst(b.b(), 0) && s.canDrop(b.a())) return b.b();
        if (isIntConst(b.a(), 0) && s.canDrop(b.b())) return b.a();
        return null;
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

    /** {@code x - x -> 0}, integers only (for floats inf - inf and NaN - NaN are NaN). */
    static Expr subSelf(Binary b, Simplifier s) {
        if (b.op() != BinaryOp.SUB || !b.dtype().isInt() || !b.a().equals(b.b()) || !s.canDrop(b.a())) return null;
        return lit(b.dtype(), 0);
    }

    /** {@code min(x, x) -> x}, {@code max(x, x) -> x}, for every type. */
    static Expr minMaxSelf(Binary b, Simplifier s) {
        return (b.op() == BinaryOp.MIN || b.op() == BinaryOp.MAX) && b.a().equals(b.b()) ? b.a() : null;
    }

    /**
     * {@code c + x -> x + c}, {@code c * x -> x * c} (every type: IEEE + and * are commutative);
     * {@code min(c, x) -> min(x, c)} and the same for max (integers only: float min/max of
     * signed zeros is not symmetric on every backend).
     */
    static Expr constRight(Binary b, Simplifier s) {
        boolean commutes = switch (b.op()) {
            case ADD, MUL -> true;
            case MIN, MAX -> b.dtype().isInt();
            default -> false;
        };
        if (!commutes || !isConst(b.a()) || isConst(b.b())) return null;
        return bin(b.op(), b.b(), b.a());
    }

    private static boolean isConst(Expr e) {
        return e instanceof IntImm || e instanceof FloatImm;
    }

    /**
     * Constant offsets fold (integers): {@code (x + c1) + c2 -> x + (c1 + c2)},
     * {@code (x - c1) + c2}, {@code (x + c1) - c2}, {@code (x - c1) - c2}, the result in
     * canonical offset form.
     */
    static Expr addConstFold(Binary b, Simplifier s) {
        Binary a = addOrSub(b.a());
        if (addOrSub(b) == null || !b.dtype().isInt() || a == null || !isIntConst(a.b()) || !isIntConst(b.b())) {
            return null;
        }
        return offset(a.a(), sign(a) * value(a.b()) + sign(b) * value(b.b()));
    }

    /**
     * Canonical sign of an offset (integers): {@code x + (-c) -> x - c} and {@code x - (-c) -> x + c}
     * (for uint8, an offset above 127 is written as the subtraction of its complement).
     */
    static Expr offsetSign(Binary b, Simplifier s) {
        if (addOrSub(b) == null || !b.dtype().isInt() || !isIntConst(b.b()) || isIntConst(b.a())) return null;
        Expr canonical = offset(b.a(), sign(b) * value(b.b()));
        return canonical.equals(b) ? null : canonical;
    }

    /**
     * Constant offsets move outward (integers): {@code (x + c) + y -> (x + y) + c},
     * {@code x + (y - c) -> (x + y) - c}, {@code (x - c) - y -> (x - y) - c},
     * {@code x - (y + c) -> (x - y) - c}, and so on for every combination of + and -.
     */
    static Expr constOutward(Binary b, Simplifier s) {
        if (addOrSub(b) == null || !b.dtype().isInt()) return null;
        Binary l = addOrSub(b.a()), r = addOrSub(b.b());
        if (l != null && isIntConst(l.b()) && !isIntConst(b.b()) && !isIntConst(l.a())) {
            return offset(bin(b.op(), l.a(), b.b()), sign(l) * value(l.b()));
        }
        if (r != null && isIntConst(r.b()) && !isIntConst(b.a()) && !isIntConst(r.a())) {
            return offset(bin(b.op(), b.a(), r.a()), (long) sign(b) * sign(r) * value(r.b()));
        }
        return null;
    }

    /**
     * Cancellation (integers): {@code (x + y) - y -> x}, {@code (x + y) - x -> y},
     * {@code (x - y) + y -> x}, {@code y + (x - y) -> x}.
     */
    static Expr addSubCancel(Binary b, Simplifier s) {
        if (!b.dtype().isInt()) return null;
        if (b.op() == BinaryOp.SUB && op(b.a(), BinaryOp.ADD) instanceof Binary a && s.canDrop(b.b())) {
            if (a.b().equals(b.b())) return a.a();
            if (a.a().equals(b.b())) return a.b();
        }
        if (b.op() == BinaryOp.ADD) {
            if (op(b.a(), BinaryOp.SUB) instanceof Binary a && a.b().equals(b.b()) && s.canDrop(b.b())) return a.a();
            if (op(b.b(), BinaryOp.SUB) instanceof Binary c && c.b().equals(b.a()) && s.canDrop(b.a())) return c.a();
        }
        return null;
    }

    /** {@code (0 - y) + x -> x - y}, {@code x + (0 - y) -> x - y}, {@code x - (0 - y) -> x + y} (integers). */
    static Expr negAdd(Binary b, Simplifier s) {
        if (addOrSub(b) == null || !b.dtype().isInt()) return null;
        Binary r = op(b.b(), BinaryOp.SUB);
        if (r != null && isIntConst(r.a(), 0)) {
            return bin(b.op() == BinaryOp.ADD ? BinaryOp.SUB : BinaryOp.ADD, b.a(), r.b());
        }
        Binary l = op(b.a(), BinaryOp.SUB);
        if (b.op() == BinaryOp.ADD && l != null && isIntConst(l.a(), 0)) return bin(BinaryOp.SUB, b.b(), l.b());
        return null;
    }

    /**
     * Like terms combine (integers): {@code x*c1 + x*c2 -> x*(c1 + c2)},
     * {@code x*c1 - x*c2 -> x*(c1 - c2)}, {@code x + x*c -> x*(1 + c)}, {@code x + x -> x*2}.
     */
    static Expr likeTerms(Binary b, Simplifier s) {
        if (addOrSub(b) == null || !b.dtype().isInt()) return null;
        Term p = Term.of(b.a()), q = Term.of(b.b());
        if (p == null || q == null || !p.base().equals(q.base())) return null;
        return Term.build(p.base(), p.coeff() + sign(b) * q.coeff());
    }

    /**
     * Like terms combine through one level of a sum (integers): {@code (y + x*c1) + x*c2 -> y + x*(c1 + c2)},
     * {@code (x*c1 + y) + x*c2 -> x*(c1 + c2) + y}, with any of the + written as -.
     */
    static Expr likeTermsNested(Binary b, Simplifier s) {
        if (addOrSub(b) == null || !b.dtype().isInt()) return null;
        Binary a = addOrSub(b.a());
        Term q = Term.of(b.b());
        if (a == null || q == null) return null;
        Term right = Term.of(a.b());
        if (right != null && right.base().equals(q.base())) {
            long k = sign(a) * right.coeff() + sign(b) * q.coeff();
            return bin(BinaryOp.ADD, a.a(), Term.build(q.base(), k));
        }
        Term left = Term.of(a.a());
        if (left != null && left.base().equals(q.base())) {
            return bin(a.op(), Term.build(q.base(), left.coeff() + sign(b) * q.coeff()), a.b());
        }
        return null;
    }

    /** {@code (x * c1) * c2 -> x * (c1 * c2)} (integers). */
    static Expr mulConstFold(Binary b, Simplifier s) {
        if (b.op() != BinaryOp.MUL || !b.dtype().isInt() || !isIntConst(b.b())) return null;
        Binary a = op(b.a(), BinaryOp.MUL);
        if (a == null || !isIntConst(a.b())) return null;
        return Term.build(a.a(), value(a.b()) * value(b.b()));
    }

    /** {@code (x + c1) * c2 -> x*c2 + c1*c2}, {@code (x - c1) * c2 -> x*c2 - c1*c2} (integers). */
    static Expr mulDistributeOffset(Binary b, Simplifier s) {
        if (b.op() != BinaryOp.MUL || !b.dtype().isInt() || !isIntConst(b.b())) return null;
        Binary a = addOrSub(b.a());
        if (a == null || !isIntConst(a.b()) || isIntConst(a.a())) return null;
        long c2 = value(b.b());
        return offset(bin(BinaryOp.MUL, a.a(), b.b()), sign(a) * value(a.b()) * c2);
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
