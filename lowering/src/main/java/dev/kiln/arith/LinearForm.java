package dev.kiln.arith;

import dev.kiln.ir.Binary;
import dev.kiln.ir.BinaryOp;
import dev.kiln.ir.DType;
import dev.kiln.ir.Expr;
import dev.kiln.ir.IntImm;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.Predicate;

/**
 * An integer expression seen as a linear form {@code c1*a1 + c2*a2 + ... + k}: constant
 * coefficients times <em>atoms</em>, plus a constant. An atom is any sub-expression that is not
 * a {@code +}, a {@code -}, a product with a constant, or a constant: a variable, a
 * floordiv/floormod/min/max/select/cast/load, or a product of two non-constants. Atoms are
 * compared structurally (a {@code Var} by identity) and listed in order of first appearance in
 * the expression read left to right.
 *
 * <p>Integer {@code + - *} wrap, which makes them a ring modulo 2^bits: distributing,
 * reassociating and cancelling are exact, overflow included. So the expression's value is
 * always the linear form's mathematical value wrapped to the type, and the coefficients and
 * the constant are kept modulo 2^bits too, as the representative nearest zero (in
 * {@code [min, max]} of the signed type of the same width: for uint8, 200 is kept as -56).
 * When {@link #exactBound} proves that the mathematical value stays within the type, nothing
 * wraps, which the division and comparison rules need.
 *
 * <p>{@link #toExpr()} writes the canonical form the simplifier keeps: terms in order of first
 * appearance, except that the first term with a positive coefficient leads; {@code a} for
 * coefficient 1, {@code a * c} otherwise; a negative coefficient after the lead is subtracted
 * ({@code x - y}, {@code x - (y * 3)}); the constant last as {@code + c} or {@code - c}. When no
 * coefficient is positive, a positive constant leads ({@code 5 - x}), else the first term does,
 * written {@code 0 - a} for coefficient -1 and {@code a * c} otherwise. Reading that form back
 * gives the same linear form and the same text, and so does every sub-sum of it.
 */
record LinearForm(DType type, List<Term> terms, long constant) {
    /** One term: {@code coeff * atom}. */
    record Term(Expr atom, long coeff) {}

    LinearForm {
        terms = List.copyOf(terms);
    }

    /** The linear form of an integer expression. */
    static LinearForm of(Expr e) {
        Acc acc = new Acc(e.dtype());
        acc.add(e, 1);
        return acc.done();
    }

    /** The linear form of {@code a - b} (integers of one type). */
    static LinearForm difference(Expr a, Expr b) {
        Acc acc = new Acc(a.dtype());
        acc.add(a, 1);
        acc.add(b, -1);
        return acc.done();
    }

    /** The form with these terms (like atoms combined) and constant. */
    static LinearForm of(DType t, List<Term> terms, long constant) {
        Acc acc = new Acc(t);
        for (Term term : terms) acc.addAtom(term.atom(), term.coeff());
        acc.constant = constant;
        return acc.done();
    }

    /** Whether {@code e} is a node that a linear form reads through (+, -, a product with a constant). */
    static boolean isLinearNode(Expr e) {
        if (!(e instanceof Binary b) || !b.dtype().isInt()) return false;
        return switch (b.op()) {
            case ADD, SUB -> true;
            case MUL -> b.a() instanceof IntImm || b.b() instanceof IntImm;
            default -> false;
        };
    }

    /** The same form without the terms of coefficient 0 whose atom {@code canDrop} allows dropping. */
    LinearForm withoutZeros(Predicate<Expr> canDrop) {
        List<Term> kept = new ArrayList<>(terms.size());
        for (Term t : terms) if (t.coeff() != 0 || !canDrop.test(t.atom())) kept.add(t);
        return kept.size() == terms.size() ? this : new LinearForm(type, kept, constant);
    }

    /**
     * The form with every pair {@code k*c * floordiv(x, c) + k * floormod(x, c)} (c a constant
     * of at least 2; likewise truncdiv with truncmod) replaced by {@code k * x}, read as a linear
     * form and merged with the other terms, which take the place of the earlier of the two atoms;
     * or null when there is no such pair. Exact with wrapping: {@code x = c*floordiv(x, c) + floormod(x, c)}
     * for every integer x, and x is still evaluated, so nothing that traps is lost.
     */
    LinearForm recombineDivMod() {
        LinearForm cur = this;
        for (boolean changed = true; changed; ) {
            changed = false;
            pairs:
            for (int i = 0; i < cur.terms.size(); i++) {
                Term mod = cur.terms.get(i);
                long c = divisor(mod.atom(), BinaryOp.FLOORMOD, BinaryOp.TRUNCMOD);
                if (c < 2 || mod.coeff() == 0) continue;
                Binary m = (Binary) mod.atom();
                BinaryOp divOp = m.op() == BinaryOp.FLOORMOD ? BinaryOp.FLOORDIV : BinaryOp.TRUNCDIV;
                for (int j = 0; j < cur.terms.size(); j++) {
                    Term div = cur.terms.get(j);
                    if (div.atom() instanceof Binary d
                            && d.op() == divOp
                            && d.b().equals(m.b())
                            && div.coeff() == reduce(type, mod.coeff() * c)
                            && Patterns.same(d.a(), m.a())) {
                        cur = cur.merged(Math.min(i, j), Math.max(i, j), m.a(), mod.coeff());
                        changed = true;
                        break pairs;
                    }
                }
            }
        }
        return cur == this ? null : cur;
    }

    /** The constant divisor of {@code e} when it is one of the two operators, else 0. */
    private static long divisor(Expr e, BinaryOp op1, BinaryOp op2) {
        if (e instanceof Binary b && (b.op() == op1 || b.op() == op2) && b.b() instanceof IntImm c) return c.value();
        return 0;
    }

    /** The form with terms {@code first} and {@code second} replaced by {@code k * x} at the place of {@code first}. */
    private LinearForm merged(int first, int second, Expr x, long k) {
        Acc acc = new Acc(type);
        for (int i = 0; i < terms.size(); i++) {
            if (i == first) acc.add(x, k);
            else if (i != second) acc.addAtom(terms.get(i).atom(), terms.get(i).coeff());
        }
        acc.constant += constant;
        return acc.done();
    }

    /** The range of the mathematical (unwrapped) value from the atoms' bounds, or null if it does not fit in a long. */
    IntRange mathBound(ConstIntBound bounds) {
        try {
            long lo = constant, hi = constant;
            for (Term t : terms) {
                IntRange r = bounds.bound(t.atom());
                long p = Math.multiplyExact(t.coeff(), r.min()), q = Math.multiplyExact(t.coeff(), r.max());
                lo = Math.addExact(lo, Math.min(p, q));
                hi = Math.addExact(hi, Math.max(p, q));
            }
            return IntRange.of(lo, hi);
        } catch (ArithmeticException overflow) {
            return null;
        }
    }

    /**
     * The range of the expression's value when the bounds prove that its mathematical value
     * stays within the type (then nothing wraps and the value is the mathematical one), else null.
     */
    IntRange exactBound(ConstIntBound bounds) {
        IntRange r = mathBound(bounds);
        return r != null && r.within(IntRange.full(type)) ? r : null;
    }

    /** The canonical expression of this form (see the class comment). */
    Expr toExpr() {
        int lead = -1;
        for (int i = 0; i < terms.size() && lead < 0; i++) if (terms.get(i).coeff() > 0) lead = i;
        Expr acc;
        boolean constantDone = false;
        if (terms.isEmpty()) {
            return Patterns.lit(type, constant);
        } else if (lead >= 0) {
            acc = scaled(terms.get(lead));
        } else if (constant > 0) {
            acc = Patterns.lit(type, constant);
            constantDone = true;
            lead = -1;
        } else {
            lead = 0;
            Term t = terms.get(0);
            acc = t.coeff() == -1 ? new Binary(BinaryOp.SUB, Patterns.lit(type, 0), t.atom()) : scaled(t);
        }
        for (int i = 0; i < terms.size(); i++) {
            if (i == lead) continue;
            Term t = terms.get(i);
            acc = negatable(t.coeff())
                    ? new Binary(BinaryOp.SUB, acc, scaled(new Term(t.atom(), -t.coeff())))
                    : new Binary(BinaryOp.ADD, acc, scaled(t));
        }
        return constantDone ? acc : Patterns.offset(acc, constant);
    }

    /** Whether a term is written as a subtraction: a negative coefficient whose negation is a constant of the type. */
    private boolean negatable(long c) {
        return c < 0 && (type.isUnsigned() || c != type.minInt());
    }

    private Expr scaled(Term t) {
        return t.coeff() == 1 ? t.atom() : new Binary(BinaryOp.MUL, t.atom(), Patterns.lit(type, t.coeff()));
    }

    /** {@code v} modulo 2^bits of {@code t}, as the representative in the signed range of that width. */
    static long reduce(DType t, long v) {
        long w = Scalars.wrap(t, v);
        if (!t.isUnsigned()) return w;
        long mod = t.maxInt() + 1;
        return w > t.maxInt() / 2 ? w - mod : w;
    }

    /** Collects terms; like atoms are found by a linear search (sums have a handful of terms). */
    private static final class Acc {
        private final DType type;
        private final List<Expr> atoms = new ArrayList<>();
        private long[] coeffs = new long[4];
        private long constant;

        Acc(DType type) {
            this.type = type;
        }

        /** Adds {@code k * e}; the long arithmetic wraps modulo 2^64, which agrees with every narrower type. */
        void add(Expr e, long k) {
            if (e instanceof IntImm c) {
                constant += k * c.value();
            } else if (e instanceof Binary b && isLinearNode(b)) {
                switch (b.op()) {
                    case ADD -> {
                        add(b.a(), k);
                        add(b.b(), k);
                    }
                    case SUB -> {
                        add(b.a(), k);
                        add(b.b(), -k);
                    }
                    default -> { // MUL with a constant
                        if (b.b() instanceof IntImm c) add(b.a(), k * c.value());
                        else add(b.b(), k * ((IntImm) b.a()).value());
                    }
                }
            } else {
                addAtom(e, k);
            }
        }

        void addAtom(Expr atom, long k) {
            for (int i = 0; i < atoms.size(); i++) {
                if (Patterns.same(atoms.get(i), atom)) {
                    coeffs[i] += k;
                    return;
                }
            }
            if (atoms.size() == coeffs.length) coeffs = Arrays.copyOf(coeffs, coeffs.length * 2);
            coeffs[atoms.size()] = k;
            atoms.add(atom);
        }

        LinearForm done() {
            List<Term> out = new ArrayList<>(atoms.size());
            for (int i = 0; i < atoms.size(); i++) out.add(new Term(atoms.get(i), reduce(type, coeffs[i])));
            return new LinearForm(type, out, reduce(type, constant));
        }
    }
}
