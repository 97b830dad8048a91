package dev.kiln.arith;

import dev.kiln.ir.BinaryOp;
import dev.kiln.ir.DType;
import dev.kiln.ir.KilnException;

/**
 * The value semantics of Kiln's scalar types, in one place, so that constant folding (and any
 * evaluator that wants to agree with it) computes exactly what the types say.
 *
 * <ul>
 *   <li>Integers wrap: int8/int16/int32/int64 are two's complement, uint8 is modulo 256.
 *   <li>floordiv/floormod round toward negative infinity (the remainder has the sign of the
 *       divisor); truncdiv/truncmod round toward zero (the remainder has the sign of the dividend).
 *       Division by zero throws {@link ArithmeticException}; so does the one quotient that
 *       overflows (the type's minimum divided by -1), which hardware traps on.
 *   <li>Floating values are held as doubles and rounded to their type after every operation:
 *       float32 by {@code (float)}, float16 and bfloat16 by a correctly rounded (round half to
 *       even) conversion from double. For +, -, *, / and sqrt on operands of these types, computing
 *       in double then rounding gives the correctly rounded result (double has more than
 *       2p + 2 bits for every p here), so no double-rounding error can creep in.
 * </ul>
 */
final class Scalars {
    private Scalars() {}

    /** Reduces {@code v} to the range of integer type {@code t} the way the hardware does (wrapping). */
    public static long wrap(DType t, long v) {
        return switch (t.kind()) {
            case INT -> t.bits() == 64 ? v : (v << (64 - t.bits())) >> (64 - t.bits());
            case UINT -> v & ((1L << t.bits()) - 1);
            case BOOL -> v != 0 ? 1 : 0;
            case FLOAT -> throw new KilnException("wrap: " + t + " is not an integer type");
        };
    }

    /** Whether {@code v} is a value of integer type {@code t} without wrapping. */
    public static boolean fits(DType t, long v) {
        return t.minInt() <= v && v <= t.maxInt();
    }

    /**
     * {@code a op b} on two values of integer type {@code t}, wrapped to {@code t}.
     *
     * @throws ArithmeticException for a division or remainder by zero, and for the type's minimum
     *     divided by -1 (the one quotient that overflows)
     */
    public static long intBinary(BinaryOp op, DType t, long a, long b) {
        if (op == BinaryOp.DIV) throw new KilnException("div is not defined on integer type " + t);
        boolean division = op.integerOnly();
        if (division && b == 0) throw new ArithmeticException(op.symbol() + " by zero");
        if (division && b == -1 && a == t.minInt()) {
            throw new ArithmeticException(op.symbol() + "(" + a + ", -1) overflows " + t);
        }
        long r =
                switch (op) {
                    case ADD -> a + b;
                    case SUB -> a - b;
                    case MUL -> a * b;
                    case FLOORDIV -> Math.floorDiv(a, b);
                    case FLOORMOD -> Math.floorMod(a, b);
                    case TRUNCDIV -> a / b;
                    case TRUNCMOD -> a % b;
                    case MIN -> Math.min(a, b);
                    case MAX -> Math.max(a, b);
                    case DIV -> throw new AssertionError("unreachable");
                };
        return wrap(t, r);
    }

    /** Rounds {@code v} to floating type {@code t} (round half to even; overflow gives infinity). */
    public static double round(DType t, double v) {
        return switch (t) {
            case FLOAT64 -> v;
            case FLOAT32 -> (float) v;
            case FLOAT16 -> roundToFormat(v, 11, -14, 65504.0);
            case BFLOAT16 -> roundToFormat(v, 8, -126, 0x1.FEp127);
            default -> throw new KilnException("round: " + t + " is not a floating type");
        };
    }

    /**
     * Correctly rounds a double to a binary format with {@code precision} significant bits,
     * smallest normal exponent {@code minExp} (gradual underflow below it) and largest finite
     * value {@code maxFinite}.
     */
    private static double roundToFormat(double v, int precision, int minExp, double maxFinite) {
        if (Double.isNaN(v) || Double.isInfinite(v) || v == 0) return v;
        int exp = Math.max(Math.getExponent(v), minExp);
        int quantum = exp - (precision - 1);
        // Scaling by a power of two is exact here; rint rounds half to even.
        double r = Math.scalb(Math.rint(Math.scalb(v, -quantum)), quantum);
        if (Math.abs(r) > maxFinite) return Math.copySign(Double.POSITIVE_INFINITY, v);
        return r == 0 ? Math.copySign(0.0, v) : r;
    }
}
