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
        BinaryOp to = switch (b.op()) {
            case TRUNCDIV -> BinaryOp.FLOORDIV;
            case TRUNCMOD -> BinaryOp.FLOORMOD;
            default -> null;
        };
        if (to == null) return null;
        ConstIntBound cb = s.bounds();
        return cb.bound(b.a()).min() >= 0 && cb.bound(b.b()).min() > 0 ? bin(to, b.a(), b.b()) : null;
    }

    /** {@code floordiv(x, c) -> k} when the bounds put all of x in one block {@code [k*c, k*c + c)} (so 0 for x in [0, c)). */
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

    /** {@code floordiv(x * c1, c2) -> x * (c1 / c2)} when c2 divides c1 and x * c1 does not wrap; so {@code floordiv(x * c, c) -> x}. */
    static Expr divOfMultiple(Binary b, Simplifier s) {
        long c2 = positiveDivisor(b, BinaryOp.FLOORDIV);
        Binary m = op(b.a(), BinaryOp.MUL);
        if (c2 <= 0 || m == null || !isIntConst(m.b()) || value(m.b()) % c2 != 0 || !mulFits(m, s)) return null;
        return Patterns.Term.build(m.a(), value(m.b()) / c2);
    }

    /** {@code floormod(x * c1, c2) -> 0} when c2 divides c1 and x * c1 does not wrap. */
    static Expr modOfMultiple(Binary b, Simplifier s) {
        long c2 = positiveDivisor(b, BinaryOp.FLOORMOD);
        Binary m = op(b.a(), BinaryOp.MUL);
        if (c2 <= 0 || m == null || !isIntConst(m.b()) || value(m.b()) % c2 != 0 || !mulFits(m, s)) return null;
        return s.canDrop(m.a()) ? lit(b.dtype(), 0) : null;
    }

    /**
     * {@code floordiv(x*c1 + y, c2) -> x*(c1/c2) + floordiv(y, c2)} when c2 divides c1, for a sum
     * of any number of terms: the terms that are multiples of c2 (including constants that are
     * multiples, and constants of at least c2, which split into a multiple and a remainder)
     * leave the division. Applies when no partial sum of the terms can wrap.
     */
    static Expr divSplitSum(Binary b, Simplifier s) {
        long c = positiveDivisor(b, BinaryOp.FLOORDIV);
        if (c <= 0) return null;
        Split sp = Split.of(b.a(), c, s);
        if (sp == null) return null;
        List<Term> out = new ArrayList<>(sp.quotient());
        if (!sp.rest().isEmpty()) {
            out.add(new Term(bin(BinaryOp.FLOORDIV, sum(sp.rest(), b.dtype()), b.b()), false));
        }
        return sum(out, b.dtype());
    }

    /** {@code floormod(x*c1 + y, c2) -> floormod(y, c2)} when c2 divides c1; for sums of any length, as {@link #divSplitSum}. */
    static Expr modSplitSum(Binary b, Simplifier s) {
        long c = positiveDivisor(b, BinaryOp.FLOORMOD);
        if (c <= 0) return null;
        Split sp = Split.of(b.a(), c, s);
        if (sp == null) return null;
        for (Term t : sp.dropped()) if (!s.canDrop(t.e())) return null;
        return sp.rest().isEmpty() ? lit(b.dtype(), 0) : bin(BinaryOp.FLOORMOD, sum(sp.rest(), b.dtype()), b.b());
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

    /** One term of a flattened sum, with its sign. */
    private record Term(Expr e, boolean negative) {}

    /** A sum's terms split by divisibility: what leaves the division (already divided), what stays, what was dropped. */
    private record Split(List<Term> quotient, List<Term> rest, List<Term> dropped) {
        static Split of(Expr sum, long c, Simplifier s) {
            List<Term> terms = new ArrayList<>();
            flatten(sum, false, terms);
            if (terms.size() < 2 || !partialSumsFit(terms, s)) return null;
            DType t = sum.dtype();
            List<Term> quotient = new ArrayList<>(), rest = new ArrayList<>(), dropped = new ArrayList<>();
            for (Term term : terms) {
                Expr e = term.e();
                Binary m = op(e, BinaryOp.MUL);
                if (isIntConst(e, 0)) {
                    dropped.add(term); // adds nothing; and no progress to split off
                } else if (isIntConst(e) && !term.negative() && value(e) >= c) {
                    long k = value(e);
                    quotient.add(new Term(lit(t, k / c), false));
                    if (k % c != 0) rest.add(new Term(lit(t, k % c), false));
                    dropped.add(term);
                } else if (isIntConst(e) && value(e) % c == 0) {
                    quotient.add(new Term(lit(t, value(e) / c), term.negative()));
                    dropped.add(term);
                } else if (m != null && isIntConst(m.b()) && value(m.b()) % c == 0 && mulFits(m, s)) {
                    quotient.add(new Term(Patterns.Term.build(m.a(), value(m.b()) / c), term.negative()));
                    dropped.add(term);
                } else {
                    rest.add(term);
                }
            }
            return quotient.isEmpty() ? null : new Split(quotient, rest, dropped);
        }

        private static void flatten(Expr e, boolean negative, List<Term> out) {
            if (e instanceof Binary b && b.op() == BinaryOp.ADD) {
                flatten(b.a(), negative, out);
                flatten(b.b(), negative, out);
            } else if (e instanceof Binary b && b.op() == BinaryOp.SUB) {
                flatten(b.a(), negative, out);
                flatten(b.b(), !negative, out);
            } else {
                out.add(new Term(e, negative));
            }
        }

        /**
         * Whether every partial sum of the terms, in any order and with any signs, stays in the
         * type: the magnitudes of the terms add up to at most the type's maximum (for uint8, no
         * term is subtracted and the terms add up to at most 255). Then the sum, and any regrouping
         * of it, computes its exact mathematical value.
         */
        private static boolean partialSumsFit(List<Term> terms, Simplifier s) {
            DType t = terms.get(0).e().dtype();
            long total = 0;
            try {
                for (Term term : terms) {
                    IntRange r = s.bounds().bound(term.e());
                    if (t.isUnsigned()) {
                        if (term.negative()) return false;
                        total = Math.addExact(total, r.max());
                    } else {
                        total = Math.addExact(total, Math.max(Math.absExact(r.min()), Math.absExact(r.max())));
                    }
                }
            } catch (ArithmeticException overflow) {
                return false;
            }
            return total <= t.maxInt();
        }
    }

    /** The terms added up in order, starting from the first positive one. */
    private static Expr sum(List<Term> terms, DType t) {
        List<Term> ordered = new ArrayList<>(terms);
        for (int i = 0; i < ordered.size(); i++) {
            if (!ordered.get(i).negative()) {
                ordered.addFirst(ordered.remove(i));
                break;
            }
        }
        Term first = ordered.get(0);
        Expr acc = first.negative() ? bin(BinaryOp.SUB, lit(t, 0), first.e()) : first.e();
        for (Term term : ordered.subList(1, ordered.size())) {
            acc = bin(term.negative() ? BinaryOp.SUB : BinaryOp.ADD, acc, term.e());
        }
        return acc;
    }
}
