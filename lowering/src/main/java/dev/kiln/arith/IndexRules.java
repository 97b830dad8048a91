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
import dev.kiln.ir.Var;
import java.util.ArrayList;
import java.util.List;

/**
 * Rules for index arithmetic: the integer divisions and remainders that splitting, fusing and
 * tiling loops produce, such as {@code floordiv(i0 * 8 + i1, 8) -> i0} for i1 in [0, 7].
 *
 * <p>These identities hold for mathematical integers, not for wrapped ones: {@code floordiv(x * 8, 8)}
 * is not x when {@code x * 8} overflows. So every rule whose left side could wrap first asks
 * {@link ConstIntBound} to prove that it does not, from the known variable ranges. Divisors are
 * positive constants.
 */
final class IndexRules {
    private IndexRules() {}

    /** A variable whose known range holds one value is that value (a loop of extent 1, a branch of {@code i == 3}). */
    static Expr varByRange(Var v, Simplifier s) {
        if (v.dtype().isFloat() || !s.ranges().containsKey(v)) return null;
        IntRange r = s.bounds().bound(v);
        return r.isSingle() ? lit(v.dtype(), r.min()) : null;
    }

    /**
     * {@code truncdiv(x, y) -> floordiv(x, y)} and {@code truncmod(x, y) -> floormod(x, y)} when
     * the bounds prove {@code x >= 0} and {@code y > 0} (the two roundings then agree), so that
     * the floor rules apply.
     */
    static Expr truncToFloor(Binary b, Simplifier s) {
        BinaryOp to =
                switch (b.op()) {
                    case TRUNCDIV -> BinaryOp.FLOORDIV;
                    case TRUNCMOD -> BinaryOp.FLOORMOD;
                    default -> null;
                };
        if (to == null) return null;
        ConstIntBound cb = s.bounds();
        return cb.bound(b.a()).min() >= 0 && cb.bound(b.b()).min() > 0 ? bin(to, b.a(), b.b()) : null;
    }

    /**
     * {@code floordiv(x, c) -> k} when the bounds put all of x in one block {@code [k*c, k*c + c)} (so 0 for x in [0,
     * c)).
     */
    static Expr divByBounds(Binary b, Simplifier s) {
        long c = positiveDivisor(b, BinaryOp.FLOORDIV);
        if (c <= 0 || isIntConst(b.a())) return null;
        IntRange x = s.bounds().bound(b.a());
        long k = Math.floorDiv(x.min(), c);
        if (k != Math.floorDiv(x.max(), c) || !s.canDrop(b.a())) return null;
        return lit(b.dtype(), k);
    }

    /** {@code floormod(x, c) -> x} when the bounds prove {@code 0 <= x < c}. */
    static Expr modByBounds(Binary b, Simplifier s) {
        long c = positiveDivisor(b, BinaryOp.FLOORMOD);
        if (c <= 0) return null;
        IntRange x = s.bounds().bound(b.a());
        return x.min() >= 0 && x.max() < c ? b.a() : null;
    }

    /**
     * {@code floordiv(x * c1, c2) -> x * (c1 / c2)} when c2 divides c1 and x * c1 does not wrap; so
     * {@code floordiv(x * c, c) -> x}.
     */
    static Expr divOfMultiple(Binary b, Simplifier s) {
        long c2 = positiveDivisor(b, BinaryOp.FLOORDIV);
        Binary m = op(b.a(), BinaryOp.MUL);
        if (c2 <= 0 || m == null || !isIntConst(m.b()) || value(m.b()) % c2 != 0 || !mulFits(m, s)) return null;
        return Patterns.scaled(m.a(), value(m.b()) / c2);
    }

    /** {@code floormod(x * c1, c2) -> 0} when c2 divides c1 and x * c1 does not wrap. */
    static Expr modOfMultiple(Binary b, Simplifier s) {
        long c2 = positiveDivisor(b, BinaryOp.FLOORMOD);
        Binary m = op(b.a(), BinaryOp.MUL);
        if (c2 <= 0 || m == null || !isIntConst(m.b()) || value(m.b()) % c2 != 0 || !mulFits(m, s)) return null;
        return s.canDrop(m.a()) ? lit(b.dtype(), 0) : null;
    }

    /**
     * {@code floordiv(x*c1 + y, c2) -> x*(c1/c2) + floordiv(y, c2)} when c2 divides c1, on the
     * {@link LinearForm} of the dividend: the terms whose coefficients are multiples of the
     * divisor, and the multiple of the divisor in the constant, leave the division; what stays
     * is the remainder part. When the bounds put the remainder part in one block
     * {@code [k*c, k*c + c)} (so {@code [0, c)} gives 0), the division goes away:
     * {@code floordiv(((i0*4 + i1) * 8) + j, 8) -> i0*4 + i1} for j in [0, 8). Applies when the
     * bounds prove that neither the dividend nor the remainder part wraps (the ring identities
     * then give the exact mathematical values, and the quotient part may wrap harmlessly).
     */
    static Expr divSplitSum(Binary b, Simplifier s) {
        long c = positiveDivisor(b, BinaryOp.FLOORDIV);
        if (c <= 1) return null;
        Split sp = Split.of(b.a(), c, s);
        if (sp == null) return null;
        List<LinearForm.Term> out = new ArrayList<>(sp.quotient().terms());
        long k = sp.quotient().constant();
        LinearForm rest = sp.rest();
        long block = sp.restBlock(c);
        if (block != NO_BLOCK && allCanDrop(rest, s)) {
            k += block;
        } else {
            out.add(new LinearForm.Term(bin(BinaryOp.FLOORDIV, rest.toExpr(), b.b()), 1));
        }
        return LinearForm.of(b.dtype(), out, k).toExpr();
    }

    /**
     * {@code floormod(x*c1 + y, c2) -> floormod(y, c2)} when c2 divides c1, on the linear form of
     * the dividend as {@link #divSplitSum}; when the bounds put the remainder part y in one block
     * {@code [k*c, k*c + c)} the result is {@code y - k*c} (so y for y in [0, c)).
     */
    static Expr modSplitSum(Binary b, Simplifier s) {
        long c = positiveDivisor(b, BinaryOp.FLOORMOD);
        if (c <= 1) return null;
        Split sp = Split.of(b.a(), c, s);
        if (sp == null || !allCanDrop(sp.quotient(), s)) return null;
        LinearForm rest = sp.rest();
        long block = sp.restBlock(c);
        if (block != NO_BLOCK)
            return LinearForm.of(b.dtype(), rest.terms(), rest.constant() - block * c)
                    .toExpr();
        return bin(BinaryOp.FLOORMOD, rest.toExpr(), b.b());
    }

    /**
     * {@code floordiv(x, c) * c + floormod(x, c) -> x} in a sum, with any common factor and the
     * other terms in any order (and the same for truncdiv and truncmod): what fusing two loops
     * and splitting the fused loop again leaves. Exact for every x, wrapping included
     * ({@link LinearForm#recombineDivMod}).
     */
    static Expr divModRecombine(Binary b, Simplifier s) {
        if (!LinearForm.isLinearNode(b) || b.op() == BinaryOp.MUL) return null;
        LinearForm f = LinearForm.of(b).recombineDivMod();
        return f == null ? null : f.withoutZeros(s::canDrop).toExpr();
    }

    /** {@code floordiv(floordiv(x, a), b) -> floordiv(x, a*b)} for a, b > 0 when a*b fits the type. */
    static Expr divDiv(Binary b, Simplifier s) {
        long c2 = positiveDivisor(b, BinaryOp.FLOORDIV);
        Binary inner = op(b.a(), BinaryOp.FLOORDIV);
        if (c2 <= 0 || inner == null) return null;
        long c1 = positiveDivisor(inner, BinaryOp.FLOORDIV);
        if (c1 <= 0) return null;
        long prod;
        try {
            prod = Math.multiplyExact(c1, c2);
        } catch (ArithmeticException e) {
            return null;
        }
        return Scalars.fits(b.dtype(), prod) ? bin(BinaryOp.FLOORDIV, inner.a(), lit(b.dtype(), prod)) : null;
    }

    /** {@code floormod(floormod(x, a), b) -> floormod(x, b)} for a, b > 0 when b divides a. */
    static Expr modMod(Binary b, Simplifier s) {
        long c2 = positiveDivisor(b, BinaryOp.FLOORMOD);
        Binary inner = op(b.a(), BinaryOp.FLOORMOD);
        if (c2 <= 0 || inner == null) return null;
        long c1 = positiveDivisor(inner, BinaryOp.FLOORMOD);
        return c1 > 0 && c1 % c2 == 0 ? bin(BinaryOp.FLOORMOD, inner.a(), b.b()) : null;
    }

    /** The divisor of {@code op(x, c)} when it is a positive constant, else 0. */
    private static long positiveDivisor(Binary b, BinaryOp want) {
        if (b.op() != want || !isIntConst(b.b())) return 0;
        return Math.max(value(b.b()), 0);
    }

    /** Whether {@code x * c} does not wrap, by the bound of x. */
    private static boolean mulFits(Binary m, Simplifier s) {
        IntRange x = s.bounds().bound(m.a());
        long c = value(m.b());
        try {
            return Scalars.fits(m.dtype(), Math.multiplyExact(x.min(), c))
                    && Scalars.fits(m.dtype(), Math.multiplyExact(x.max(), c));
        } catch (ArithmeticException e) {
            return false;
        }
    }

    private static boolean allCanDrop(LinearForm f, Simplifier s) {
        for (LinearForm.Term t : f.terms()) if (!s.canDrop(t.atom())) return false;
        return true;
    }

    private static final long NO_BLOCK = Long.MIN_VALUE;

    /**
     * A dividend {@code q*c + r} split by a divisor c: the quotient part q (the terms whose
     * coefficients are multiples of c, divided by c, and the constant's multiple of c), the
     * remainder part r (the other terms, and the rest of the constant: its remainder when the
     * constant is non-negative or a multiple of c, else the whole negative constant), and the
     * remainder's exact bound.
     */
    private record Split(LinearForm quotient, LinearForm rest, IntRange restBound) {
        /** The split, or null when nothing leaves the division or the bounds cannot prove that nothing wraps. */
        static Split of(Expr dividend, long c, Simplifier s) {
            if (!dividend.dtype().isInt()) return null;
            LinearForm f = LinearForm.of(dividend);
            DType t = f.type();
            List<LinearForm.Term> q = new ArrayList<>(), r = new ArrayList<>();
            for (LinearForm.Term term : f.terms()) {
                if (term.coeff() != 0 && term.coeff() % c == 0)
                    q.add(new LinearForm.Term(term.atom(), term.coeff() / c));
                else r.add(term);
            }
            long k = f.constant();
            long restConst = k >= 0 || k % c == 0 ? Math.floorMod(k, c) : k;
            long quotConst = (k - restConst) / c;
            if (q.isEmpty() && quotConst == 0) return null;
            if (f.exactBound(s.bounds()) == null) return null;
            LinearForm rest = LinearForm.of(t, r, restConst);
            IntRange rb = rest.exactBound(s.bounds());
            if (rb == null) return null;
            return new Split(LinearForm.of(t, q, quotConst), rest, rb);
        }

        /** k when the remainder part lies in one block {@code [k*c, k*c + c)}, else {@link #NO_BLOCK}. */
        long restBlock(long c) {
            long k = Math.floorDiv(restBound.min(), c);
            return k == Math.floorDiv(restBound.max(), c) ? k : NO_BLOCK;
        }
    }
}
