package dev.kiln.arith;

import dev.kiln.ir.And;
import dev.kiln.ir.Binary;
import dev.kiln.ir.BinaryOp;
import dev.kiln.ir.BufferLoad;
import dev.kiln.ir.Call;
import dev.kiln.ir.Cast;
import dev.kiln.ir.Compare;
import dev.kiln.ir.DType;
import dev.kiln.ir.Expr;
import dev.kiln.ir.ExprPrinter;
import dev.kiln.ir.FloatImm;
import dev.kiln.ir.IntImm;
import dev.kiln.ir.KilnException;
import dev.kiln.ir.Not;
import dev.kiln.ir.Or;
import dev.kiln.ir.Reduce;
import dev.kiln.ir.Select;
import dev.kiln.ir.TensorRead;
import dev.kiln.ir.Var;
import java.util.IdentityHashMap;
import java.util.Map;

/**
 * Constant integer bounds: the smallest and largest value an integer (or bool) expression can
 * take, given the ranges of its variables (loop variables, usually). It looks through constants,
 * + - * min max, the four integer divisions and remainders, select, casts and abs; anything else
 * (a buffer load, say) gets the full range of its type.
 *
 * <p>The bound is sound for the value the expression really has, with integers wrapping: where a
 * node could overflow its type, its bound is the type's full range. So a bound narrower than the
 * full range also proves that its node does not wrap. Results are cached by node identity;
 * an instance is tied to one map of ranges and is not thread-safe.
 */
public final class ConstIntBound {
    private final Map<Var, IntRange> ranges;
    private final Map<Expr, IntRange> cache = new IdentityHashMap<>();

    /** Bounds with these known variable ranges (a variable without one spans its type). */
    public ConstIntBound(Map<Var, IntRange> ranges) {
        this.ranges = Map.copyOf(ranges);
    }

    /** The bound of an integer or bool expression. */
    public IntRange bound(Expr e) {
        if (e.dtype().isFloat()) {
            throw new KilnException("no integer bound for " + ExprPrinter.print(e) + " of type " + e.dtype());
        }
        IntRange r = cache.get(e);
        if (r == null) {
            r = compute(e);
            cache.put(e, r);
        }
        return r;
    }

    private IntRange compute(Expr e) {
        DType t = e.dtype();
        IntRange full = IntRange.full(t);
        return switch (e) {
            case IntImm c -> IntRange.single(c.value());
            case Var v -> {
                IntRange r = ranges.get(v);
                yield r == null ? full : orFull(r.intersect(full), full);
            }
            case Binary b -> binary(b.op(), t, bound(b.a()), bound(b.b()));
            case Select s -> {
                IntRange c = bound(s.cond());
                if (c.isSingle()) yield bound(c.min() != 0 ? s.t() : s.f());
                yield bound(s.t()).union(bound(s.f()));
            }
            case Cast c -> {
                if (c.value().dtype().isFloat()) yield full; // saturating conversion stays in the type
                if (t.isBool()) {
                    IntRange v = bound(c.value());
                    yield !v.contains(0) ? IntRange.single(1) : v.isSingle() ? IntRange.single(0) : full;
                }
                IntRange v = bound(c.value());
                yield v.within(full) ? v : full; // a narrowing cast wraps
            }
            case Call c -> {
                // Only abs has an integer type.
                IntRange v = bound(c.args().get(0));
                if (v.min() >= 0) yield v;
                if (v.min() == t.minInt()) yield full; // abs(min) wraps to min
                if (v.max() <= 0) yield IntRange.of(-v.max(), -v.min());
                yield IntRange.of(0, Math.max(-v.min(), v.max()));
            }
            case Compare c -> full;
            case And a -> full;
            case Or o -> full;
            case Not n -> full;
            case FloatImm f -> throw new AssertionError("float constant has no integer bound");
            case BufferLoad l -> full;
            case TensorRead r -> full;
            case Reduce r -> full;
        };
    }

    private static IntRange orFull(IntRange r, IntRange full) {
        return r == null ? full : r;
    }

    /** The bound of {@code a op b} for operands in {@code x} and {@code y}, or the type's full range. */
    static IntRange binary(BinaryOp op, DType t, IntRange x, IntRange y) {
        IntRange full = IntRange.full(t);
        try {
            IntRange r =
                    switch (op) {
                        case ADD -> IntRange.of(Math.addExact(x.min(), y.min()), Math.addExact(x.max(), y.max()));
                        case SUB ->
                            IntRange.of(Math.subtractExact(x.min(), y.max()), Math.subtractExact(x.max(), y.min()));
                        case MUL -> corners(op, x, y);
                        case MIN -> IntRange.of(Math.min(x.min(), y.min()), Math.min(x.max(), y.max()));
                        case MAX -> IntRange.of(Math.max(x.min(), y.min()), Math.max(x.max(), y.max()));
                        case FLOORDIV, TRUNCDIV -> division(op, x, y);
                        case FLOORMOD -> floorMod(x, y);
                        case TRUNCMOD -> truncMod(x, y);
                        case DIV -> throw new AssertionError("div on " + t);
                    };
            return r != null && r.within(full) ? r : full;
        } catch (ArithmeticException overflow) {
            return full;
        }
    }

    /** Extremes of an operator monotone in each operand separately lie on the corners of the box. */
    private static IntRange corners(BinaryOp op, IntRange x, IntRange y) {
        long[] v = {
            apply(op, x.min(), y.min()),
            apply(op, x.min(), y.max()),
            apply(op, x.max(), y.min()),
            apply(op, x.max(), y.max())
        };
        long lo = v[0], hi = v[0];
        for (long w : v) {
            lo = Math.min(lo, w);
            hi = Math.max(hi, w);
        }
        return IntRange.of(lo, hi);
    }

    private static long apply(BinaryOp op, long a, long b) {
        if ((op == BinaryOp.FLOORDIV || op == BinaryOp.TRUNCDIV) && a == Long.MIN_VALUE && b == -1) {
            throw new ArithmeticException("overflow");
        }
        return switch (op) {
            case MUL -> Math.multiplyExact(a, b);
            case FLOORDIV -> Math.floorDiv(a, b);
            case TRUNCDIV -> a / b;
            default -> throw new AssertionError(op);
        };
    }

    /** Splits the divisor into its negative and positive parts (a zero divisor is a runtime error, no value). */
    private static IntRange division(BinaryOp op, IntRange x, IntRange y) {
        IntRange r = null;
        if (y.max() >= 1) r = corners(op, x, IntRange.of(Math.max(y.min(), 1), y.max()));
        if (y.min() <= -1) {
            IntRange n = corners(op, x, IntRange.of(y.min(), Math.min(y.max(), -1)));
            r = r == null ? n : r.union(n);
        }
        return r; // null (divisor is always zero): full range
    }

    private static IntRange floorMod(IntRange x, IntRange y) {
        if (y.isSingle() && y.min() > 0) {
            long c = y.min();
            if (Math.floorDiv(x.min(), c) == Math.floorDiv(x.max(), c)) {
                return IntRange.of(Math.floorMod(x.min(), c), Math.floorMod(x.max(), c));
            }
        }
        IntRange r = null;
        if (y.max() >= 1) {
            r = IntRange.of(0, y.max() - 1);
            if (x.min() >= 0) r = IntRange.of(0, Math.min(x.max(), y.max() - 1));
        }
        if (y.min() <= -1) {
            IntRange n = IntRange.of(y.min() + 1, 0);
            r = r == null ? n : r.union(n);
        }
        return r;
    }

    private static IntRange truncMod(IntRange x, IntRange y) {
        if (y.isSingle() && y.min() == 0) return null;
        // |remainder| < |divisor|, and the remainder has the sign of the dividend.
        long m = Math.max(y.max() >= 1 ? y.max() : 0, y.min() <= -1 ? Math.negateExact(y.min()) : 0) - 1;
        long lo = x.min() >= 0 ? 0 : Math.max(x.min(), -m);
        long hi = x.max() <= 0 ? 0 : Math.min(x.max(), m);
        return IntRange.of(lo, hi);
    }
}
