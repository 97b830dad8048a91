package dev.kiln.interp;

import static org.junit.jupiter.api.Assertions.fail;

import dev.kiln.ir.Buffer;
import dev.kiln.ir.BufferLoad;
import dev.kiln.ir.DType;
import dev.kiln.ir.Expr;
import dev.kiln.ir.IntImm;
import dev.kiln.ir.MemoryScope;
import dev.kiln.ir.Var;
import dev.kiln.runtime.NDArray;
import dev.kiln.tir.For;
import dev.kiln.tir.PrimFunc;
import dev.kiln.tir.Store;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.function.Function;

/**
 * Test helpers: elementwise functions over 1-D buffers, random values that cover a type's whole
 * range, and reference rounding written independently of the code under test (float16 and
 * bfloat16 by exact comparison of the neighbouring candidates with BigDecimal).
 */
final class Ref {
    private Ref() {}

    /** A row-major global buffer. */
    static Buffer buf(String name, DType t, long... shape) {
        List<Long> s = new ArrayList<>();
        for (long x : shape) s.add(x);
        return Buffer.rowMajor(name, t, s, MemoryScope.GLOBAL);
    }

    static Expr i32(long v) {
        return IntImm.i32(v);
    }

    static Expr load(Buffer b, Expr... idx) {
        return new BufferLoad(b, List.of(idx));
    }

    static Store store(Buffer b, Expr v, Expr... idx) {
        return new Store(b, List.of(idx), v);
    }

    static final DType[] FLOATS = {DType.FLOAT16, DType.BFLOAT16, DType.FLOAT32, DType.FLOAT64};
    static final DType[] INTS = {DType.INT8, DType.INT16, DType.INT32, DType.INT64, DType.UINT8};

    /** {@code out[i] = body(in0[i], in1[i], ...)} for {@code i} in {@code [0, n)}. */
    static PrimFunc elementwise(
            String name, DType outType, List<DType> inTypes, int n, Function<List<Expr>, Expr> body) {
        List<Buffer> params = new ArrayList<>();
        List<Expr> loads = new ArrayList<>();
        Var i = new Var("i");
        for (int k = 0; k < inTypes.size(); k++) {
            Buffer b = Buffer.rowMajor("in" + k, inTypes.get(k), List.of((long) n), MemoryScope.GLOBAL);
            params.add(b);
            loads.add(new BufferLoad(b, List.of(i)));
        }
        Buffer out = Buffer.rowMajor("out", outType, List.of((long) n), MemoryScope.GLOBAL);
        params.add(out);
        return new PrimFunc(
                name,
                params,
                For.serial(i, IntImm.i32(0), IntImm.i32(n), new Store(out, List.of(i), body.apply(loads))));
    }

    /** Runs an elementwise function and returns the output. */
    static NDArray run(PrimFunc f, DType outType, int n, NDArray... inputs) {
        NDArray out = NDArray.allocate(outType, n);
        NDArray[] args = new NDArray[inputs.length + 1];
        System.arraycopy(inputs, 0, args, 0, inputs.length);
        args[inputs.length] = out;
        Interpreter.run(f, args);
        return out;
    }

    /**
     * Random values over the whole type: for integers, a mix of full-range and small values; for
     * floats, a mix of [-1, 1), wide magnitudes, halves (.5 ties) and the specials 0, -0, inf,
     * -inf, NaN at the first positions (unless {@code specials} is false).
     */
    static NDArray wide(DType t, long seed, int n, boolean specials) {
        SplittableRandom r = new SplittableRandom(seed);
        NDArray a = NDArray.allocate(t, n);
        for (int i = 0; i < n; i++) {
            if (t.isBool()) {
                a.setLongFlat(r.nextInt(2), i);
            } else if (t.isInt()) {
                long v =
                        switch (r.nextInt(3)) {
                            case 0 -> r.nextLong(-9, 10);
                            case 1 -> t == DType.INT64 ? r.nextLong() : r.nextLong(t.minInt(), t.maxInt() + 1);
                            default ->
                                t == DType.INT64
                                        ? r.nextLong(-(1L << 40), 1L << 40)
                                        : r.nextLong(t.minInt(), t.maxInt() + 1);
                        };
                a.setLongFlat(Math.max(t.minInt(), Math.min(t.maxInt(), v)), i);
            } else {
                int maxExp = t == DType.FLOAT16 ? 14 : 60;
                double v =
                        switch (r.nextInt(3)) {
                            case 0 -> r.nextDouble(-1, 1);
                            case 1 -> (r.nextDouble() - 0.5) * Math.scalb(1.0, r.nextInt(-20, maxExp));
                            default -> r.nextInt(-40, 40) + 0.5;
                        };
                a.setDoubleFlat(v, i);
            }
        }
        if (specials && t.isFloat() && n >= 5) {
            double[] sp = {0.0, -0.0, Double.POSITIVE_INFINITY, Double.NEGATIVE_INFINITY, Double.NaN};
            for (int k = 0; k < sp.length; k++) a.setDoubleFlat(sp[k], k);
        }
        if (specials && t.isInt() && n >= 3) {
            a.setLongFlat(t.minInt(), 0);
            a.setLongFlat(t.maxInt(), 1);
            a.setLongFlat(-1, 2);
        }
        return a;
    }

    /** Like {@link #wide} but never zero (for divisors). */
    static NDArray nonZero(DType t, long seed, int n) {
        NDArray a = wide(t, seed, n, true);
        for (int i = 0; i < n; i++) if (a.getLongFlat(i) == 0) a.setLongFlat(i % 2 == 0 ? 3 : -5, i);
        return a;
    }

    // ---- reference rounding -------------------------------------------------------------------

    /** {@code x} rounded to floating type {@code t}, by an implementation independent of Numerics. */
    static double round(DType t, double x) {
        return switch (t) {
            case FLOAT64 -> x;
            case FLOAT32 -> (float) x;
            case FLOAT16, BFLOAT16 ->
                Double.isNaN(x) || Double.isInfinite(x) || x == 0 ? x : nearest16(t, new BigDecimal(x), x < 0);
            default -> throw new IllegalArgumentException(t.toString());
        };
    }

    /** An integer rounded to floating type {@code t} exactly (no detour through double). */
    static double roundLong(DType t, long v) {
        return switch (t) {
            case FLOAT64 -> (double) v;
            case FLOAT32 -> (float) v;
            case FLOAT16, BFLOAT16 -> v == 0 ? 0.0 : nearest16(t, new BigDecimal(v), v < 0);
            default -> throw new IllegalArgumentException(t.toString());
        };
    }

    /** The nearest 16-bit value by exact comparison of candidate bit patterns; ties to the even pattern. */
    private static double nearest16(DType t, BigDecimal x, boolean negative) {
        BigDecimal mag = x.abs();
        double approx = mag.doubleValue();
        int guess = t == DType.FLOAT16
                ? Float.floatToFloat16((float) approx) & 0x7FFF
                : (Float.floatToRawIntBits((float) approx) >>> 16) & 0x7FFF;
        int inf = t == DType.FLOAT16 ? 0x7C00 : 0x7F80;
        int best = -1;
        BigDecimal bestErr = null;
        for (int c = Math.max(0, guess - 2); c <= Math.min(inf, guess + 2); c++) {
            BigDecimal err = value16(t, c, inf).subtract(mag).abs();
            int cmp = bestErr == null ? -1 : err.compareTo(bestErr);
            if (cmp < 0 || (cmp == 0 && (c & 1) == 0)) {
                best = c;
                bestErr = err;
            }
        }
        double m =
                best == inf ? Double.POSITIVE_INFINITY : value16(t, best, inf).doubleValue();
        return negative ? -m : m;
    }

    /** Exact value of a non-negative 16-bit pattern; the infinity pattern counts as 2^(emax + 1). */
    private static BigDecimal value16(DType t, int bits, int inf) {
        if (bits == inf) return new BigDecimal(t == DType.FLOAT16 ? 65536.0 : 0x1p128);
        double v = t == DType.FLOAT16 ? Float.float16ToFloat((short) bits) : Float.intBitsToFloat(bits << 16);
        return new BigDecimal(v);
    }

    /** Reference integer wrap, with Java's narrowing conversions. */
    static long wrap(DType t, long v) {
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

    /** Fails unless two values are the same (NaN equals NaN; -0 differs from +0). */
    static void assertSame(double expected, double actual, String what) {
        if (Double.isNaN(expected) && Double.isNaN(actual)) return;
        if (Double.doubleToLongBits(expected) != Double.doubleToLongBits(actual)) {
            fail(what + ": expected " + expected + " but got " + actual);
        }
    }
}
