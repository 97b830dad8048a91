package dev.kiln.runtime;

import dev.kiln.ir.DType;
import dev.kiln.ir.KilnException;

/**
 * Scalar conversions between Kiln's data types, shared by {@link NDArray} and the reference
 * interpreter so that both round, wrap and convert in exactly one way.
 *
 * <ul>
 *   <li>Floating values are held as {@code double}; {@link #roundFloat} rounds one to its type with
 *       round-to-nearest-even (float16 and bfloat16 directly from the double, one rounding, with
 *       their subnormals and overflow to infinity).</li>
 *   <li>Integer and bool values are held as {@code long}; {@link #wrap} reduces one to its type
 *       (int8 wraps to [-128, 127], uint8 to [0, 255], bool is {@code x != 0}).</li>
 *   <li>{@link #floatToInt} and {@link #intToFloat} follow {@link dev.kiln.ir.Cast}: float to
 *       integer truncates toward zero and saturates (NaN becomes 0), to bool is {@code x != 0}
 *       (so NaN becomes true); integer to float rounds to nearest even in one step.</li>
 *   <li>float16 is stored as IEEE binary16 bits; bfloat16 as the upper 16 bits of a float32.</li>
 * </ul>
 */
public final class Numerics {
    private Numerics() {}

    /** Largest finite float16, 65504. */
    public static final double FLOAT16_MAX = 65504.0;
    /** Largest finite bfloat16, (2 - 2^-7) * 2^127. */
    public static final double BFLOAT16_MAX = 0x1.FCp127;

    /** Rounds {@code x} to the nearest float16 value (ties to even), as a double. */
    public static double roundToFloat16(double x) {
        return roundTo(x, 11, -14, FLOAT16_MAX);
    }

    /** Rounds {@code x} to the nearest bfloat16 value (ties to even), as a double. */
    public static double roundToBFloat16(double x) {
        return roundTo(x, 8, -126, BFLOAT16_MAX);
    }

    /** Round to {@code p} significant bits with minimum normal exponent {@code emin}; beyond max is infinity. */
    private static double roundTo(double x, int p, int emin, double max) {
        if (x == 0 || Double.isNaN(x) || Double.isInfinite(x)) return x;
        int e = Math.max(Math.getExponent(x), emin);
        double ulp = Math.scalb(1.0, e - (p - 1));
        double r = Math.rint(x / ulp) * ulp; // both steps exact: scaling by a power of two
        if (Math.abs(r) > max) return Math.copySign(Double.POSITIVE_INFINITY, x);
        return r;
    }

    /** Rounds {@code x} to floating type {@code t}. */
    public static double roundFloat(DType t, double x) {
        return switch (t) {
            case FLOAT64 -> x;
            case FLOAT32 -> (float) x;
            case FLOAT16 -> roundToFloat16(x);
            case BFLOAT16 -> roundToBFloat16(x);
            case INT8, INT16, INT32, INT64, UINT8, BOOL -> throw new KilnException(t + " is not a floating type");
        };
    }

    /** Reduces {@code v} to integer or bool type {@code t}: wraps to the width, bool is {@code v != 0}. */
    public static long wrap(DType t, long v) {
        return switch (t) {
            case INT8 -> (byte) v;
            case INT16 -> (short) v;
            case INT32 -> (int) v;
            case INT64 -> v;
            case UINT8 -> v & 0xFF;
            case BOOL -> v != 0 ? 1 : 0;
            case FLOAT16, BFLOAT16, FLOAT32, FLOAT64 -> throw new KilnException(t + " is not an integer type");
        };
    }

    /**
     * Converts a floating value to integer or bool type {@code t}: truncates toward zero and
     * saturates at the type's range, NaN gives 0; for bool, {@code x != 0} (NaN gives 1).
     */
    public static long floatToInt(DType t, double x) {
        if (t == DType.BOOL) return x != 0 ? 1 : 0;
        if (Double.isNaN(x)) return 0;
        long v = (long) x; // truncates and saturates at the int64 range
        return Math.min(Math.max(v, t.minInt()), t.maxInt());
    }

    /** Converts an integer (or bool 0/1) value to floating type {@code t} with one rounding. */
    public static double intToFloat(DType t, long v) {
        return switch (t) {
            case FLOAT64 -> (double) v;
            case FLOAT32 -> (float) v;
            case FLOAT16 -> roundToFloat16(roundLong(v, 11));
            case BFLOAT16 -> roundToBFloat16(roundLong(v, 8));
            case INT8, INT16, INT32, INT64, UINT8, BOOL -> throw new KilnException(t + " is not a floating type");
        };
    }

    /** {@code v} rounded to {@code p} significant bits, ties to even, exactly as a double. */
    static double roundLong(long v, int p) {
        if (v == Long.MIN_VALUE) return -0x1p63;
        long a = Math.abs(v);
        int nbits = 64 - Long.numberOfLeadingZeros(a);
        if (nbits <= p) return v;
        int sh = nbits - p;
        long q = a >>> sh;
        long rem = a & ((1L << sh) - 1);
        long half = 1L << (sh - 1);
        if (rem > half || (rem == half && (q & 1) == 1)) q++;
        double r = Math.scalb((double) q, sh);
        return v < 0 ? -r : r;
    }

    // ---- 16-bit storage formats --------------------------------------------------------------

    /** The binary16 bits of {@code x} rounded to float16. */
    public static short toFloat16Bits(double x) {
        return Float.floatToFloat16((float) roundToFloat16(x)); // exact: the value is a float16 already
    }

    /** The value of binary16 bits. */
    public static double fromFloat16Bits(short bits) {
        return Float.float16ToFloat(bits);
    }

    /** The bfloat16 bits of {@code x} rounded to bfloat16 (a quiet NaN for NaN). */
    public static short toBFloat16Bits(double x) {
        if (Double.isNaN(x)) return (short) 0x7FC0;
        return (short) (Float.floatToRawIntBits((float) roundToBFloat16(x)) >>> 16);
    }

    /** The bfloat16 bits of a float: its upper 16 bits rounded to nearest even (a quiet NaN for NaN). */
    public static short toBFloat16Bits(float f) {
        int b = Float.floatToRawIntBits(f);
        if (Float.isNaN(f)) return (short) ((b >>> 16) | 0x40);
        int lsb = (b >>> 16) & 1;
        return (short) ((b + 0x7FFF + lsb) >>> 16);
    }

    /** The value of bfloat16 bits. */
    public static double fromBFloat16Bits(short bits) {
        return Float.intBitsToFloat((bits & 0xFFFF) << 16);
    }
}
