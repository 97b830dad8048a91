package dev.kiln.arith;

import dev.kiln.ir.And;
import dev.kiln.ir.Binary;
import dev.kiln.ir.BinaryOp;
import dev.kiln.ir.Call;
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
import java.util.List;

/**
 * Constant folding: operators applied to constants, computed with exactly the semantics of the
 * types ({@link Scalars}). Every method returns the folded constant, or null when the node does
 * not have constant operands or must not be folded:
 *
 * <ul>
 *   <li>a division or remainder by zero (and the overflowing {@code min / -1}) is left for the
 *       runtime to report, for integers and floats alike;
 *   <li>float min/max of a NaN, or of +0.0 and -0.0, is left alone: backends differ there (IEEE
 *       minNum returns the other operand for NaN, Java's Math.min returns NaN);
 *   <li>erf is not folded (the JDK has no erf to define its value), nor fma on float16/bfloat16
 *       (a double fma followed by rounding is not one correct rounding);
 *   <li>an int64 beyond 2^53 converted to bfloat16 is not folded (double rounding).
 * </ul>
 * Transcendental functions (exp, log, tanh, pow, sigmoid) are folded with {@link StrictMath}
 * and rounded to the type; as with any compiler's folding, a backend's own libm may differ from
 * the folded value by an ulp.
 */
final class ConstFold {
    private ConstFold() {}

    /** An integer or bool constant of type {@code t}, wrapping {@code v} to the type. */
    public static IntImm intConst(DType t, long v) {
        return new IntImm(t, Scalars.wrap(t, v));
    }

    /** A floating constant of type {@code t}, rounded to the type. */
    public static FloatImm floatConst(DType t, double v) {
        return new FloatImm(t, Scalars.round(t, v));
    }

    /** The value of a floating constant as its type sees it (the stored double rounded to the type). */
    static double value(FloatImm c) {
        return Scalars.round(c.dtype(), c.value());
    }

    /** {@code c1 op c2}. */
    public static Expr binary(Binary b) {
        if (b.a() instanceof IntImm x && b.b() instanceof IntImm y) {
            try {
                return intConst(b.dtype(), Scalars.intBinary(b.op(), b.dtype(), x.value(), y.value()));
            } catch (ArithmeticException divisionByZeroOrOverflow) {
                return null; // the runtime reports it
            }
        }
        if (b.a() instanceof FloatImm x && b.b() instanceof FloatImm y) {
            return floatBinary(b.op(), b.dtype(), value(x), value(y));
        }
        return null;
    }

    private static Expr floatBinary(BinaryOp op, DType t, double a, double b) {
        if (op == BinaryOp.DIV && b == 0) return null;
        if ((op == BinaryOp.MIN || op == BinaryOp.MAX)
                && (Double.isNaN(a) || Double.isNaN(b) || (a == 0 && b == 0 && !sameSign(a, b)))) {
            return null;
        }
        if (t == DType.FLOAT32) {
            float x = (float) a, y = (float) b;
            float r =
                    switch (op) {
                        case ADD -> x + y;
                        case SUB -> x - y;
                        case MUL -> x * y;
                        case DIV -> x / y;
                        case MIN -> Math.min(x, y);
                        case MAX -> Math.max(x, y);
                        case FLOORDIV, FLOORMOD, TRUNCDIV, TRUNCMOD -> throw new AssertionError(op + " on " + t);
                    };
            return new FloatImm(t, r);
        }
        double r =
                switch (op) {
                    case ADD -> a + b;
                    case SUB -> a - b;
                    case MUL -> a * b;
                    case DIV -> a / b;
                    case MIN -> Math.min(a, b);
                    case MAX -> Math.max(a, b);
                    case FLOORDIV, FLOORMOD, TRUNCDIV, TRUNCMOD -> throw new AssertionError(op + " on " + t);
                };
        return floatConst(t, r);
    }

    private static boolean sameSign(double a, double b) {
        return (Double.doubleToRawLongBits(a) < 0) == (Double.doubleToRawLongBits(b) < 0);
    }

    /** {@code c1 cmp c2}: integers by value, floats by IEEE order (every comparison with NaN is false but !=). */
    public static Expr compare(Compare c) {
        int order;
        boolean unordered = false;
        if (c.a() instanceof IntImm x && c.b() instanceof IntImm y) {
            order = Long.compare(x.value(), y.value());
        } else if (c.a() instanceof FloatImm x && c.b() instanceof FloatImm y) {
            double a = value(x), b = value(y);
            unordered = Double.isNaN(a) || Double.isNaN(b);
            order = a < b ? -1 : a > b ? 1 : 0; // -0.0 == 0.0
        } else {
            return null;
        }
        boolean r = !unordered
                && switch (c.op()) {
                    case EQ -> order == 0;
                    case NE -> order != 0;
                    case LT -> order < 0;
                    case LE -> order <= 0;
                    case GT -> order > 0;
                    case GE -> order >= 0;
                };
        if (unordered && c.op() == CompareOp.NE) r = true;
        return IntImm.bool(r);
    }

    public static Expr and(And e) {
        return e.a() instanceof IntImm x && e.b() instanceof IntImm y
                ? IntImm.bool(x.value() != 0 && y.value() != 0)
                : null;
    }

    public static Expr or(Or e) {
        return e.a() instanceof IntImm x && e.b() instanceof IntImm y
                ? IntImm.bool(x.value() != 0 || y.value() != 0)
                : null;
    }

    public static Expr not(Not e) {
        return e.a() instanceof IntImm x ? IntImm.bool(x.value() == 0) : null;
    }

    /** {@code select(true, a, b) -> a}, {@code select(false, a, b) -> b} (the other branch is never evaluated). */
    public static Expr select(Select s) {
        return s.cond() instanceof IntImm c ? (c.value() != 0 ? s.t() : s.f()) : null;
    }

    /**
     * A cast of a constant, as {@link Cast} defines it: float to integer truncates toward zero and
     * saturates (NaN gives 0); integer to integer wraps; anything to bool is {@code x != 0}; bool
     * to a number is 0 or 1; to a float rounds to the target type.
     */
    public static Expr cast(Cast c) {
        DType to = c.dtype();
        if (c.value() instanceof IntImm x) {
            long v = x.value();
            if (to.isBool()) return IntImm.bool(v != 0);
            if (to.isInt()) return intConst(to, v);
            return switch (to) {
                case FLOAT32 -> new FloatImm(to, (float) v); // long -> float rounds once
                case FLOAT64 -> new FloatImm(to, (double) v);
                case BFLOAT16 -> Math.abs(v) <= (1L << 53) ? floatConst(to, v) : null;
                default -> floatConst(to, v); // float16: anything past 2^53 is infinity either way
            };
        }
        if (c.value() instanceof FloatImm x) {
            double v = value(x);
            if (to.isBool()) return IntImm.bool(v != 0); // NaN != 0
            if (to.isInt()) {
                if (Double.isNaN(v)) return new IntImm(to, 0);
                if (v <= to.minInt()) return new IntImm(to, to.minInt());
                if (v >= to.maxInt()) return new IntImm(to, to.maxInt());
                return new IntImm(to, (long) v); // truncates toward zero
            }
            return floatConst(to, v);
        }
        return null;
    }

    /** An intrinsic applied to constants. */
    public static Expr call(Call c) {
        List<Expr> args = c.args();
        DType t = c.dtype();
        if (t.isInt()) {
            return args.get(0) instanceof IntImm x ? intConst(t, Math.abs(x.value())) : null; // only abs
        }
        double[] v = new double[args.size()];
        for (int i = 0; i < v.length; i++) {
            if (!(args.get(i) instanceof FloatImm x)) return null;
            v[i] = value(x);
        }
        double r =
                switch (c.fn()) {
                    case EXP -> StrictMath.exp(v[0]);
                    case LOG -> StrictMath.log(v[0]);
                    case SQRT -> Math.sqrt(v[0]);
                    case RSQRT -> 1.0 / Math.sqrt(v[0]);
                    case TANH -> StrictMath.tanh(v[0]);
                    case SIGMOID -> 1.0 / (1.0 + StrictMath.exp(-v[0]));
                    case ERF -> Double.NaN; // not folded, see below
                    case POW -> StrictMath.pow(v[0], v[1]);
                    case EXACT_DIV -> v[0] / v[1];
                    case ABS -> Math.abs(v[0]);
                    case FLOOR -> Math.floor(v[0]);
                    case CEIL -> Math.ceil(v[0]);
                    case ROUND -> Math.rint(v[0]);
                    case FMA ->
                        switch (t) {
                            case FLOAT32 -> Math.fma((float) v[0], (float) v[1], (float) v[2]);
                            case FLOAT64 -> Math.fma(v[0], v[1], v[2]);
                            default -> Double.NaN; // not folded, see below
                        };
                };
        if (c.fn() == dev.kiln.ir.Intrinsic.ERF) return null;
        if (c.fn() == dev.kiln.ir.Intrinsic.FMA && t != DType.FLOAT32 && t != DType.FLOAT64) return null;
        return floatConst(t, r);
    }
}
