package dev.kiln.autoschedule.feature;

import dev.kiln.ir.Binary;
import dev.kiln.ir.BinaryOp;
import dev.kiln.ir.Cast;
import dev.kiln.ir.Expr;
import dev.kiln.ir.Exprs;
import dev.kiln.ir.IntImm;
import dev.kiln.ir.Select;
import dev.kiln.ir.Var;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * An integer index expression as {@code constant + sum(coef * term)}: a term is a variable or an
 * atom, a sub-expression kept whole (a division or remainder by a constant, or anything else
 * non-linear). Building the form cancels what the schedule's index arithmetic adds and takes
 * away again ({@code floordiv(f, 4) * 32 + i - floordiv(f, 4) * 32} is {@code i}), so the feature
 * extractor works on lowered programs without running the simplifier. Ranges are then cheap:
 * each term's range times its coefficient.
 */
final class Affine {
    /** Where a variable ranges: {@code out[0]..out[1]}, both inclusive. */
    interface Ranges {
        void range(Var v, long[] out);
    }

    /** A value so large that adding a few of them does not overflow a long. */
    static final long UNBOUNDED = 1L << 40;

    final long constant;
    final Map<Object, Long> terms; // Var, DivMod or Opaque -> coefficient (never 0)

    private Affine(long constant, Map<Object, Long> terms) {
        this.constant = constant;
        this.terms = terms;
    }

    static Affine constant(long c) {
        return new Affine(c, Map.of());
    }

    /** {@code floordiv}, {@code floormod}, {@code truncdiv} or {@code truncmod} of a form by a positive constant. */
    record DivMod(BinaryOp op, Affine arg, long divisor) {}

    /** A sub-expression with no linear form; its range comes from interval arithmetic. */
    record Opaque(Expr expr) {}

    /** The form of {@code e}; {@code lets} gives the forms of let-bound variables (may be null). */
    static Affine of(Expr e, Map<Var, Affine> lets) {
        return switch (e) {
            case IntImm c -> constant(c.value());
            case Var v -> {
                Affine bound = lets == null ? null : lets.get(v);
                yield bound != null ? bound : term(v, 1);
            }
            case Cast c
            when c.value().dtype().isInt()
                    && c.dtype().isInt()
                    && c.dtype().bits() >= c.value().dtype().bits() -> of(c.value(), lets);
            case Binary b -> binary(b, lets);
            default -> term(new Opaque(e), 1);
        };
    }

    private static Affine binary(Binary b, Map<Var, Affine> lets) {
        switch (b.op()) {
            case ADD, SUB -> {
                Affine x = of(b.a(), lets), y = of(b.b(), lets);
                return x.plus(y, b.op() == BinaryOp.ADD ? 1 : -1);
            }
            case MUL -> {
                Affine x = of(b.a(), lets), y = of(b.b(), lets);
                if (y.isConstant()) return x.scale(y.constant);
                if (x.isConstant()) return y.scale(x.constant);
                return term(new Opaque(b), 1);
            }
            case FLOORDIV, FLOORMOD, TRUNCDIV, TRUNCMOD -> {
                Affine y = of(b.b(), lets);
                if (!y.isConstant() || y.constant <= 0) return term(new Opaque(b), 1);
                long c = y.constant;
                Affine x = of(b.a(), lets);
                if (x.isConstant()) return constant(fold(b.op(), x.constant, c));
                boolean div = b.op() == BinaryOp.FLOORDIV || b.op() == BinaryOp.TRUNCDIV;
                if (c == 1) return div ? x : constant(0);
                return term(new DivMod(b.op(), x, c), 1);
            }
            default -> {
                return term(new Opaque(b), 1);
            }
        }
    }

    private static long fold(BinaryOp op, long a, long c) {
        return switch (op) {
            case FLOORDIV -> Math.floorDiv(a, c);
            case FLOORMOD -> Math.floorMod(a, c);
            case TRUNCDIV -> a / c;
            case TRUNCMOD -> a % c;
            default -> throw new IllegalArgumentException(op.toString());
        };
    }

    private static Affine term(Object t, long coef) {
        Map<Object, Long> m = new LinkedHashMap<>(2);
        m.put(t, coef);
        return new Affine(0, m);
    }

    boolean isConstant() {
        return terms.isEmpty();
    }

    private Affine plus(Affine o, long sign) {
        if (o.terms.isEmpty()) return new Affine(constant + sign * o.constant, terms);
        Map<Object, Long> m = new LinkedHashMap<>(terms);
        for (Map.Entry<Object, Long> t : o.terms.entrySet()) {
            long c = m.getOrDefault(t.getKey(), 0L) + sign * t.getValue();
            if (c == 0) m.remove(t.getKey());
            else m.put(t.getKey(), c);
        }
        return new Affine(constant + sign * o.constant, m);
    }

    private Affine scale(long k) {
        if (k == 0) return constant(0);
        if (k == 1) return this;
        Map<Object, Long> m = new LinkedHashMap<>(terms);
        m.replaceAll((t, c) -> c * k);
        return new Affine(constant * k, m);
    }

    /** The range of the form: {@code out[0]..out[1]}. */
    void range(Ranges r, long[] out) {
        long lo = constant, hi = constant;
        long[] t = new long[2];
        for (Map.Entry<Object, Long> e : terms.entrySet()) {
            termRange(e.getKey(), r, t);
            long c = e.getValue();
            if (t[0] <= -UNBOUNDED || t[1] >= UNBOUNDED) {
                out[0] = -UNBOUNDED;
                out[1] = UNBOUNDED;
                return;
            }
            if (c > 0) {
                lo += c * t[0];
                hi += c * t[1];
            } else {
                lo += c * t[1];
                hi += c * t[0];
            }
        }
        out[0] = lo;
        out[1] = hi;
    }

    private static void termRange(Object term, Ranges r, long[] out) {
        switch (term) {
            case Var v -> r.range(v, out);
            case DivMod d -> {
                d.arg().range(r, out);
                divMod(d.op(), d.divisor(), out);
            }
            case Opaque o -> exprRange(o.expr(), r, out);
            default -> throw new IllegalStateException("unknown term " + term);
        }
    }

    /** Applies {@code op} by the positive constant {@code c} to the range in {@code out}. */
    private static void divMod(BinaryOp op, long c, long[] out) {
        long lo = out[0], hi = out[1];
        if (lo <= -UNBOUNDED || hi >= UNBOUNDED) {
            if (op == BinaryOp.FLOORMOD) {
                out[0] = 0;
                out[1] = c - 1;
            } else if (op == BinaryOp.TRUNCMOD) {
                out[0] = lo <= -UNBOUNDED ? -(c - 1) : 0;
                out[1] = c - 1;
            }
            return;
        }
        switch (op) {
            case FLOORDIV -> {
                out[0] = Math.floorDiv(lo, c);
                out[1] = Math.floorDiv(hi, c);
            }
            case TRUNCDIV -> {
                out[0] = lo / c;
                out[1] = hi / c;
            }
            case FLOORMOD -> {
                if (Math.floorDiv(lo, c) == Math.floorDiv(hi, c)) {
                    out[0] = Math.floorMod(lo, c);
                    out[1] = Math.floorMod(hi, c);
                } else {
                    out[0] = 0;
                    out[1] = c - 1;
                }
            }
            case TRUNCMOD -> {
                if (lo >= 0 && lo / c == hi / c) {
                    out[0] = lo % c;
                    out[1] = hi % c;
                } else {
                    out[0] = lo < 0 ? -(c - 1) : 0;
                    out[1] = hi > 0 ? c - 1 : 0;
                }
            }
            default -> throw new IllegalArgumentException(op.toString());
        }
    }

    /** Interval arithmetic on an expression with no linear form; unknown values are unbounded. */
    private static void exprRange(Expr e, Ranges r, long[] out) {
        switch (e) {
            case Binary b
            when b.dtype().isInt() -> {
                long[] y = new long[2];
                of(b.a(), null).range(r, out);
                of(b.b(), null).range(r, y);
                if (out[0] <= -UNBOUNDED || out[1] >= UNBOUNDED || y[0] <= -UNBOUNDED || y[1] >= UNBOUNDED) {
                    boolean mod = b.op() == BinaryOp.FLOORMOD || b.op() == BinaryOp.TRUNCMOD;
                    if (mod && y[0] == y[1] && y[0] > 0) {
                        divMod(b.op(), y[0], out);
                    } else {
                        unbounded(out);
                    }
                    return;
                }
                switch (b.op()) {
                    case MUL -> {
                        long p1 = out[0] * y[0], p2 = out[0] * y[1], p3 = out[1] * y[0], p4 = out[1] * y[1];
                        out[0] = Math.min(Math.min(p1, p2), Math.min(p3, p4));
                        out[1] = Math.max(Math.max(p1, p2), Math.max(p3, p4));
                    }
                    case MIN -> {
                        out[0] = Math.min(out[0], y[0]);
                        out[1] = Math.min(out[1], y[1]);
                    }
                    case MAX -> {
                        out[0] = Math.max(out[0], y[0]);
                        out[1] = Math.max(out[1], y[1]);
                    }
                    case FLOORDIV, FLOORMOD, TRUNCDIV, TRUNCMOD -> {
                        if (y[0] == y[1] && y[0] > 0) divMod(b.op(), y[0], out);
                        else if (y[0] > 0 && (b.op() == BinaryOp.FLOORMOD || b.op() == BinaryOp.TRUNCMOD)) {
                            out[0] = Math.min(0, out[0]);
                            out[1] = Math.max(0, Math.min(out[1], y[1] - 1));
                        } else unbounded(out);
                    }
                    default -> unbounded(out);
                }
            }
            case Select s
            when s.dtype().isInt() -> {
                long[] y = new long[2];
                of(s.t(), null).range(r, out);
                of(s.f(), null).range(r, y);
                out[0] = Math.min(out[0], y[0]);
                out[1] = Math.max(out[1], y[1]);
            }
            default -> unbounded(out);
        }
    }

    private static void unbounded(long[] out) {
        out[0] = -UNBOUNDED;
        out[1] = UNBOUNDED;
    }

    /** Whether {@code v} occurs in the form (directly or inside an atom). */
    boolean uses(Var v) {
        for (Object t : terms.keySet()) if (termUses(t, v)) return true;
        return false;
    }

    private static boolean termUses(Object t, Var v) {
        return switch (t) {
            case Var x -> x == v;
            case DivMod d -> d.arg().uses(v);
            case Opaque o -> Exprs.uses(o.expr(), v);
            default -> false;
        };
    }

    /**
     * How far the value moves when {@code v} grows by one, as a magnitude: its coefficient; inside
     * a remainder the inner coefficient; inside a division the inner coefficient over the divisor;
     * inside anything else 2 (Ansor's guess). 0 when {@code v} does not occur.
     */
    double coefficient(Var v) {
        double s = 0;
        for (Map.Entry<Object, Long> e : terms.entrySet()) {
            double c = Math.abs(e.getValue());
            switch (e.getKey()) {
                case Var x -> s += x == v ? c : 0;
                case DivMod d -> {
                    double inner = d.arg().coefficient(v);
                    boolean div = d.op() == BinaryOp.FLOORDIV || d.op() == BinaryOp.TRUNCDIV;
                    s += c * (div ? inner / d.divisor() : inner);
                }
                case Opaque o -> s += Exprs.uses(o.expr(), v) ? 2 * c : 0;
                default -> {}
            }
        }
        return s;
    }

    /** Arithmetic a compiled index needs: additions, multiplications by a coefficient, divisions and remainders. */
    void countOps(long[] addMulDiv) {
        int n = 0;
        for (Map.Entry<Object, Long> e : terms.entrySet()) {
            n++;
            if (Math.abs(e.getValue()) != 1) addMulDiv[1]++;
            if (e.getKey() instanceof DivMod d) {
                addMulDiv[2]++;
                d.arg().countOps(addMulDiv);
            }
        }
        if (constant != 0) n++;
        if (n > 1) addMulDiv[0] += n - 1;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Affine a && a.constant == constant && a.terms.equals(terms);
    }

    @Override
    public int hashCode() {
        return Long.hashCode(constant) * 31 + terms.hashCode();
    }

    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder();
        terms.forEach((t, c) -> sb.append(c).append('*').append(t).append(" + "));
        return sb.append(constant).toString();
    }
}
