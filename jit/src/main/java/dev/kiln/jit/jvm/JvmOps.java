package dev.kiln.jit.jvm;

import dev.kiln.ir.DType;
import dev.kiln.ir.KilnException;
import dev.kiln.runtime.Numerics;
import java.lang.foreign.MemorySegment;
import org.apache.commons.math3.special.Erf;

/**
 * Scalar operations that generated kernels call (HotSpot inlines them): integer division and
 * remainder with the interpreter's rounding and its division-by-zero report, the math intrinsics
 * that are not one {@link Math} call, conversions to float16 and bfloat16, and zeroing scratch
 * memory. Each follows {@link dev.kiln.interp.Interpreter} exactly.
 */
final class JvmOps {
    private JvmOps() {}

    static KilnException byZero(long dividend, String site) {
        return new KilnException("integer division by zero in " + site + " (dividend " + dividend + ")");
    }

    static int floorDiv(int a, int b, String site) {
        if (b == 0) throw byZero(a, site);
        return Math.floorDiv(a, b);
    }

    static int floorMod(int a, int b, String site) {
        if (b == 0) throw byZero(a, site);
        return Math.floorMod(a, b);
    }

    static int truncDiv(int a, int b, String site) {
        if (b == 0) throw byZero(a, site);
        return a / b;
    }

    static int truncMod(int a, int b, String site) {
        if (b == 0) throw byZero(a, site);
        return a % b;
    }

    static long floorDiv(long a, long b, String site) {
        if (b == 0) throw byZero(a, site);
        return Math.floorDiv(a, b);
    }

    static long floorMod(long a, long b, String site) {
        if (b == 0) throw byZero(a, site);
        return Math.floorMod(a, b);
    }

    static long truncDiv(long a, long b, String site) {
        if (b == 0) throw byZero(a, site);
        return a / b;
    }

    static long truncMod(long a, long b, String site) {
        if (b == 0) throw byZero(a, site);
        return a % b;
    }

    static double rsqrt(double x) {
        return 1.0 / Math.sqrt(x);
    }

    static double sigmoid(double x) {
        return 1.0 / (1.0 + Math.exp(-x));
    }

    static double erf(double x) {
        return Double.isNaN(x) ? x : Erf.erf(x);
    }

    static double longToFloat16(long v) {
        return Numerics.intToFloat(DType.FLOAT16, v);
    }

    static double longToBFloat16(long v) {
        return Numerics.intToFloat(DType.BFLOAT16, v);
    }

    /** Float to a narrow integer type: truncate toward zero, saturate at [min, max], NaN gives 0. */
    static int saturate(double x, long min, long max) {
        return (int) Math.min(Math.max((long) x, min), max);
    }

    /** Clears {@code bytes} bytes of scratch memory at {@code offset} (an allocation is zero on entry). */
    static void zero(MemorySegment s, long offset, long bytes) {
        s.asSlice(offset, bytes).fill((byte) 0);
    }
}
