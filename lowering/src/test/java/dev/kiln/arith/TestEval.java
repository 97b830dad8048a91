package dev.kiln.arith;

import dev.kiln.ir.And;
import dev.kiln.ir.Binary;
import dev.kiln.ir.BufferLoad;
import dev.kiln.ir.Call;
import dev.kiln.ir.Cast;
import dev.kiln.ir.Compare;
import dev.kiln.ir.DType;
import dev.kiln.ir.Expr;
import dev.kiln.ir.FloatImm;
import dev.kiln.ir.IntImm;
import dev.kiln.ir.Not;
import dev.kiln.ir.Or;
import dev.kiln.ir.Select;
import dev.kiln.ir.Var;
import java.util.Map;
import java.util.function.Function;

/**
 * A tiny reference evaluator for the tests, written independently of {@link Scalars}: integer
 * arithmetic goes through Java's own byte/short/int/long types (which wrap), floats through
 * float/double. Division by zero and min / -1 throw ArithmeticException. Every value is a long
 * (integers, bools as 0/1) or a double (floats, float32 values rounded to float).
 */
public final class TestEval {
    private final Map<Var, ? extends Number> env;
    private final Function<BufferLoad, Number> loads;

    public TestEval(Map<Var, ? extends Number> env) {
        this(env, l -> {
            throw new IllegalStateException("no memory to load " + l);
        });
    }

    public TestEval(Map<Var, ? extends Number> env, Function<BufferLoad, Number> loads) {
        this.env = env;
        this.loads = loads;
    }

    public long i(Expr e) {
        return eval(e).longValue();
    }

    public double f(Expr e) {
        return eval(e).doubleValue();
    }

    /** Wraps a mathematical integer into type {@code t} using Java's narrowing conversions. */
    public static long norm(DType t, long v) {
        return switch (t) {
            case INT8 -> (byte) v;
            case INT16 -> (short) v;
            case INT32 -> (int) v;
            case INT64 -> v;
            case UINT8 -> v & 0xFF;
            case BOOL -> v != 0 ? 1 : 0;
            default -> throw new IllegalArgumentException(t.toString());
        };
    }

    public Number eval(Expr e) {
        return switch (e) {
            case IntImm c -> c.value();
            case FloatImm c -> c.dtype() == DType.FLOAT32 ? (double) (float) c.value() : c.value();
            case Var v -> {
                Number n = env.get(v);
                if (n == null) throw new IllegalStateException("no value for " + v.name());
                yield n;
            }
            case Binary b -> b.dtype().isInt() ? (Number) intOp(b) : (Number) floatOp(b);
            case Compare c -> {
                int order;
                boolean nan = false;
                if (c.a().dtype().isFloat()) {
                    double x = f(c.a()), y = f(c.b());
                    nan = Double.isNaN(x) || Double.isNaN(y);
                    order = x < y ? -1 : x > y ? 1 : 0;
                } else {
                    order = Long.compare(i(c.a()), i(c.b()));
                }
                boolean r =
                        switch (c.op()) {
                            case EQ -> !nan && order == 0;
                            case NE -> nan || order != 0;
                            case LT -> !nan && order < 0;
                            case LE -> !nan && order <= 0;
                            case GT -> !nan && order > 0;
                            case GE -> !nan && order >= 0;
                        };
                yield r ? 1L : 0L;
            }
            case And a -> {
                long x = i(a.a()), y = i(a.b()); // both evaluated
                yield (x != 0 && y != 0) ? 1L : 0L;
            }
            case Or o -> {
                long x = i(o.a()), y = i(o.b());
                yield (x != 0 || y != 0) ? 1L : 0L;
            }
            case Not n -> i(n.a()) == 0 ? 1L : 0L;
            case Select s -> i(s.cond()) != 0 ? eval(s.t()) : eval(s.f());
            case Cast c -> cast(c);
            case Call c -> {
                if (!c.dtype().isInt()) throw new IllegalStateException("float intrinsics not evaluated here: " + c);
                yield norm(c.dtype(), Math.abs(i(c.args().get(0))));
            }
            case BufferLoad l -> loads.apply(l);
            default -> throw new IllegalStateException("cannot evaluate " + e);
        };
    }

    private long intOp(Binary b) {
        DType t = b.dtype();
        long x = i(b.a()), y = i(b.b());
        if (b.op().integerOnly()) {
            if (y == 0) throw new ArithmeticException("division by zero in " + b);
            if (y == -1 && x == t.minInt()) throw new ArithmeticException("overflowing division in " + b);
        }
        if (t == DType.INT32) {
            int p = (int) x, q = (int) y;
            return switch (b.op()) {
                case ADD -> p + q;
                case SUB -> p - q;
                case MUL -> p * q;
                case FLOORDIV -> Math.floorDiv(p, q);
                case FLOORMOD -> Math.floorMod(p, q);
                case TRUNCDIV -> p / q;
                case TRUNCMOD -> p % q;
                case MIN -> Math.min(p, q);
                case MAX -> Math.max(p, q);
                case DIV -> throw new IllegalStateException();
            };
        }
        long r =
                switch (b.op()) {
                    case ADD -> x + y;
                    case SUB -> x - y;
                    case MUL -> x * y;
                    case FLOORDIV -> Math.floorDiv(x, y);
                    case FLOORMOD -> Math.floorMod(x, y);
                    case TRUNCDIV -> x / y;
                    case TRUNCMOD -> x % y;
                    case MIN -> Math.min(x, y);
                    case MAX -> Math.max(x, y);
                    case DIV -> throw new IllegalStateException();
                };
        return norm(t, r);
    }

    private double floatOp(Binary b) {
        double x = f(b.a()), y = f(b.b());
        if (b.dtype() == DType.FLOAT32) {
            float p = (float) x, q = (float) y;
            return switch (b.op()) {
                case ADD -> p + q;
                case SUB -> p - q;
                case MUL -> p * q;
                case DIV -> p / q;
                case MIN -> Math.min(p, q);
                case MAX -> Math.max(p, q);
                default -> throw new IllegalStateException();
            };
        }
        if (b.dtype() != DType.FLOAT64) throw new IllegalStateException("only float32/float64 here");
        return switch (b.op()) {
            case ADD -> x + y;
            case SUB -> x - y;
            case MUL -> x * y;
            case DIV -> x / y;
            case MIN -> Math.min(x, y);
            case MAX -> Math.max(x, y);
            default -> throw new IllegalStateException();
        };
    }

    private Number cast(Cast c) {
        DType to = c.dtype(), from = c.value().dtype();
        if (to.isFloat()) {
            double v = from.isFloat() ? f(c.value()) : (double) i(c.value());
            return to == DType.FLOAT32 ? (double) (float) v : v;
        }
        if (to.isBool()) return (from.isFloat() ? f(c.value()) != 0 : i(c.value()) != 0) ? 1L : 0L;
        if (from.isFloat()) {
            double v = f(c.value());
            if (Double.isNaN(v)) return 0L;
            return (long) Math.max(to.minInt(), Math.min(to.maxInt(), (double) (long) v));
        }
        return norm(to, i(c.value()));
    }
}
