package dev.kiln.arith;

import dev.kiln.ir.And;
import dev.kiln.ir.Binary;
import dev.kiln.ir.BinaryOp;
import dev.kiln.ir.Cast;
import dev.kiln.ir.Compare;
import dev.kiln.ir.CompareOp;
import dev.kiln.ir.DType;
import dev.kiln.ir.Expr;
import dev.kiln.ir.FloatImm;
import dev.kiln.ir.IntImm;
import dev.kiln.ir.Not;
import dev.kiln.ir.Or;
import dev.kiln.ir.Select;

/**
 * Rules for comparisons, logic, select and cast, and the min/max rule decided by bounds. Each
 * method is one rule; it returns the rewritten node or null. Float comparisons are never
 * negated or decided by reflexivity: with NaN, {@code x == x} is false and {@code !(a < b)} is
 * not {@code a >= b}.
 */
final class LogicRules {
    private LogicRules() {}

    /** {@code x == x, x <= x, x >= x -> true} and {@code x != x, x < x, x > x -> false} for integers and bools. */
    static Expr compareSelf(Compare c, Simplifier s) {
        if (c.a().dtype().isFloat() || !c.a().equals(c.b()) || !s.canDrop(c.a())) return null;
        return IntImm.bool(
                switch (c.op()) {
                    case EQ, LE, GE -> true;
                    case NE, LT, GT -> false;
                });
    }

    /** {@code c < x -> x > c} and so on: the constant goes right (exact for every type, NaN included). */
    static Expr compareConstRight(Compare c, Simplifier s) {
        if (!isConst(c.a()) || isConst(c.b())) return null;
        return new Compare(mirror(c.op()), c.b(), c.a());
    }

    private static boolean isConst(Expr e) {
        return e instanceof IntImm || e instanceof FloatImm;
    }

    private static CompareOp mirror(CompareOp op) {
        return switch (op) {
            case EQ -> CompareOp.EQ;
            case NE -> CompareOp.NE;
            case LT -> CompareOp.GT;
            case LE -> CompareOp.GE;
            case GT -> CompareOp.LT;
            case GE -> CompareOp.LE;
        };
    }

    /**
     * An integer comparison the bounds decide folds to true or false: {@code i < 512 -> true}
     * for i in [0, 511]. The bounds of both sides give the range of {@code a - b}; when that is
     * not enough and the difference cannot wrap, the simplified difference is bounded too, which
     * decides {@code i + 1 > i}.
     */
    static Expr compareByBounds(Compare c, Simplifier s) {
        if (!c.a().dtype().isInt()) return null;
        IntRange d = difference(c.a(), c.b(), s);
        if (d == null) return null;
        Boolean r =
                switch (c.op()) {
                    case LT -> d.max() < 0 ? Boolean.TRUE : d.min() >= 0 ? Boolean.FALSE : null;
                    case LE -> d.max() <= 0 ? Boolean.TRUE : d.min() > 0 ? Boolean.FALSE : null;
                    case GT -> d.min() > 0 ? Boolean.TRUE : d.max() <= 0 ? Boolean.FALSE : null;
                    case GE -> d.min() >= 0 ? Boolean.TRUE : d.max() < 0 ? Boolean.FALSE : null;
                    case EQ -> d.isSingle() && d.min() == 0 ? Boolean.TRUE : !d.contains(0) ? Boolean.FALSE : null;
                    case NE -> d.isSingle() && d.min() == 0 ? Boolean.FALSE : !d.contains(0) ? Boolean.TRUE : null;
                };
        if (r == null || !s.canDrop(c.a()) || !s.canDrop(c.b())) return null;
        return IntImm.bool(r);
    }

    /**
     * {@code min(a, b) -> a} when the bounds prove {@code a <= b} (else b when {@code b <= a}); the same for max
     * (integers).
     */
    static Expr minMaxByBounds(Binary b, Simplifier s) {
        if ((b.op() != BinaryOp.MIN && b.op() != BinaryOp.MAX) || !b.dtype().isInt()) return null;
        IntRange d = difference(b.a(), b.b(), s);
        if (d == null) return null;
        boolean min = b.op() == BinaryOp.MIN;
        if (d.max() <= 0 && s.canDrop(min ? b.b() : b.a())) return min ? b.a() : b.b();
        if (d.min() >= 0 && s.canDrop(min ? b.a() : b.b())) return min ? b.b() : b.a();
        return null;
    }

    /**
     * The range of the exact difference {@code a - b} of two integer values, or null if it is
     * unbounded in long. The bounds of a and b give one range; when that does not decide the
     * sign, the {@link LinearForm} of {@code a - b}, whose like terms cancel, gives another:
     * {@code (f*8 + i) - (f*8 + 8)} is {@code i - 8}. The linear form equals the difference
     * modulo 2^bits, so the two are equal, and the ranges intersect, when both ranges lie within
     * 2^bits consecutive integers.
     */
    static IntRange difference(Expr a, Expr b, Simplifier s) {
        IntRange ra = s.bounds().bound(a), rb = s.bounds().bound(b);
        IntRange d;
        try {
            d = IntRange.of(Math.subtractExact(ra.min(), rb.max()), Math.subtractExact(ra.max(), rb.min()));
        } catch (ArithmeticException overflow) {
            return null;
        }
        if (!d.contains(0) || d.isSingle()) return d;
        IntRange lin = LinearForm.difference(a, b).withoutZeros(x -> true).mathBound(s.bounds());
        if (lin == null || !withinOneWrap(d.union(lin), a.dtype())) return d;
        IntRange refined = d.intersect(lin);
        return refined == null ? d : refined;
    }

    /** Whether a range spans fewer than 2^bits integers, so that two of its values equal modulo 2^bits are equal. */
    private static boolean withinOneWrap(IntRange r, DType t) {
        long span;
        try {
            span = Math.subtractExact(r.max(), r.min());
        } catch (ArithmeticException overflow) {
            return false;
        }
        return t.bits() == 64 || span <= t.maxInt() - t.minInt();
    }

    /** {@code x && true -> x}, {@code true && x -> x}, {@code x && false -> false}, {@code false && x -> false}. */
    static Expr andConst(And e, Simplifier s) {
        if (e.b() instanceof IntImm c) return c.value() != 0 ? e.a() : s.canDrop(e.a()) ? c : null;
        if (e.a() instanceof IntImm c) return c.value() != 0 ? e.b() : s.canDrop(e.b()) ? c : null;
        return null;
    }

    /** {@code x || false -> x}, {@code false || x -> x}, {@code x || true -> true}, {@code true || x -> true}. */
    static Expr orConst(Or e, Simplifier s) {
        if (e.b() instanceof IntImm c) return c.value() == 0 ? e.a() : s.canDrop(e.a()) ? c : null;
        if (e.a() instanceof IntImm c) return c.value() == 0 ? e.b() : s.canDrop(e.b()) ? c : null;
        return null;
    }

    /** {@code x && x -> x}. */
    static Expr andSelf(And e, Simplifier s) {
        return e.a().equals(e.b()) ? e.a() : null;
    }

    /** {@code x || x -> x}. */
    static Expr orSelf(Or e, Simplifier s) {
        return e.a().equals(e.b()) ? e.a() : null;
    }

    /** {@code !!x -> x}. */
    static Expr notNot(Not e, Simplifier s) {
        return e.a() instanceof Not inner ? inner.a() : null;
    }

    /** {@code !(a < b) -> a >= b} and so on, for integer and bool operands only (not floats: NaN). */
    static Expr notCompare(Not e, Simplifier s) {
        if (!(e.a() instanceof Compare c) || c.a().dtype().isFloat()) return null;
        CompareOp neg =
                switch (c.op()) {
                    case EQ -> CompareOp.NE;
                    case NE -> CompareOp.EQ;
                    case LT -> CompareOp.GE;
                    case LE -> CompareOp.GT;
                    case GT -> CompareOp.LE;
                    case GE -> CompareOp.LT;
                };
        return new Compare(neg, c.a(), c.b());
    }

    /** {@code select(c, x, x) -> x}. */
    static Expr selectSame(Select e, Simplifier s) {
        return e.t().equals(e.f()) && s.canDrop(e.cond()) ? e.t() : null;
    }

    /** {@code select(!c, a, b) -> select(c, b, a)}. */
    static Expr selectNot(Select e, Simplifier s) {
        return e.cond() instanceof Not n ? new Select(n.a(), e.f(), e.t()) : null;
    }

    /** A cast to the type the value already has is the value. */
    static Expr castSame(Cast c, Simplifier s) {
        return c.value().dtype() == c.dtype() ? c.value() : null;
    }
}
