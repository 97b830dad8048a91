package dev.kiln.schedule;

import dev.kiln.arith.IntRange;
import dev.kiln.ir.Binary;
import dev.kiln.ir.Cast;
import dev.kiln.ir.Expr;
import dev.kiln.ir.IntImm;
import dev.kiln.ir.Literals;
import dev.kiln.ir.Select;
import dev.kiln.ir.Var;
import java.util.Map;

/**
 * Symbolic interval arithmetic for bound inference: the smallest and largest value of an index
 * expression when some loop variables range over their whole extent (they are "relaxed") and the
 * others stay symbolic. Anything it cannot bound (a data-dependent index, a product of two loop
 * variables) gives null, and the caller falls back to the whole dimension.
 */
final class IndexBounds {
    private IndexBounds() {}

    /** An inclusive interval with symbolic ends. */
    record Interval(Expr min, Expr max) {
        static Interval point(Expr e) {
            return new Interval(e, e);
        }

        boolean isPoint() {
            return min == max;
        }
    }

    static Interval of(Expr e, Map<Var, IntRange> relaxed) {
        return switch (e) {
            case IntImm c -> Interval.point(c);
            case Var v -> {
                IntRange r = relaxed.get(v);
                yield r == null
                        ? Interval.point(v)
                        : new Interval(Literals.of(v.dtype(), r.min()), Literals.of(v.dtype(), r.max()));
            }
            case Binary b -> binary(b, relaxed);
            case Select s -> {
                Interval t = of(s.t(), relaxed), f = of(s.f(), relaxed);
                yield t == null || f == null
                        ? null
                        : new Interval(t.min().min(f.min()), t.max().max(f.max()));
            }
            case Cast c
            when c.dtype().isInt()
                    && c.value().dtype().isInt()
                    && c.dtype().bits() >= c.value().dtype().bits() -> {
                Interval i = of(c.value(), relaxed);
                yield i == null
                        ? null
                        : new Interval(i.min().cast(c.dtype()), i.max().cast(c.dtype()));
            }
            default -> null;
        };
    }

    private static Interval binary(Binary b, Map<Var, IntRange> relaxed) {
        Interval a = of(b.a(), relaxed), c = of(b.b(), relaxed);
        if (a == null || c == null) return null;
        // A function of fixed values is one fixed value (keeps floormod(floordiv(t, 7), 2) exact).
        if (a.isPoint() && c.isPoint())
            return Interval.point(a.min() == b.a() && c.min() == b.b() ? b : new Binary(b.op(), a.min(), c.min()));
        return switch (b.op()) {
            case ADD -> new Interval(a.min().add(c.min()), a.max().add(c.max()));
            case SUB -> new Interval(a.min().sub(c.max()), a.max().sub(c.min()));
            case MUL -> {
                if (c.isPoint() && c.min() instanceof IntImm k) yield scale(a, k);
                if (a.isPoint() && a.min() instanceof IntImm k) yield scale(c, k);
                if (a.isPoint() && c.isPoint()) yield Interval.point(a.min().mul(c.min()));
                yield null;
            }
            case FLOORDIV -> {
                if (c.isPoint() && c.min() instanceof IntImm k && k.value() > 0) {
                    yield new Interval(a.min().floordiv(k), a.max().floordiv(k));
                }
                yield a.isPoint() && c.isPoint() ? Interval.point(a.min().floordiv(c.min())) : null;
            }
            case FLOORMOD -> {
                if (a.isPoint() && c.isPoint()) yield Interval.point(a.min().floormod(c.min()));
                if (c.isPoint() && c.min() instanceof IntImm k && k.value() > 0) {
                    yield new Interval(Literals.of(k.dtype(), 0L), Literals.of(k.dtype(), k.value() - 1));
                }
                yield null;
            }
            case MIN -> new Interval(a.min().min(c.min()), a.max().min(c.max()));
            case MAX -> new Interval(a.min().max(c.min()), a.max().max(c.max()));
            case TRUNCDIV, TRUNCMOD, DIV ->
                a.isPoint() && c.isPoint() ? Interval.point(new Binary(b.op(), a.min(), c.min())) : null;
        };
    }

    private static Interval scale(Interval a, IntImm k) {
        if (k.value() >= 0) return new Interval(a.min().mul(k), a.max().mul(k));
        return new Interval(a.max().mul(k), a.min().mul(k));
    }
}
