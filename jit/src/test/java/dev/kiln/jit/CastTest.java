package dev.kiln.jit;

import dev.kiln.ir.DType;
import dev.kiln.ir.Expr;
import dev.kiln.runtime.NDArray;
import dev.kiln.tir.ForKind;
import dev.kiln.tir.PrimFunc;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.function.Function;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Casts from every dtype to every other, bit for bit against the interpreter, on inputs that
 * hit the edges: NaN, infinities, signed zeros, halfway cases, values just inside and outside each
 * integer range (saturation and wrapping), float16/bfloat16 overflow and subnormals, and integers
 * whose naive conversion to float16/bfloat16 would round twice; plus seeded random values.
 */
class CastTest {
    private static final double[] FLOATS = {
        Double.NaN,
        Double.POSITIVE_INFINITY,
        Double.NEGATIVE_INFINITY,
        0.0,
        -0.0,
        0.5,
        -0.5,
        1.5,
        2.5,
        -2.5,
        0.1,
        1.0 / 3,
        127.4,
        127.6,
        128,
        -128.5,
        -129,
        255.5,
        256,
        300,
        -300,
        32767.5,
        32768,
        -32769,
        65504,
        65519,
        65520,
        70000,
        1e10,
        -1e10,
        2147483647.0,
        2147483648.0,
        -2147483649.0,
        9.3e18,
        -9.3e18,
        3.4e38,
        3.5e38,
        1e300,
        -1e300,
        1e-8,
        6e-8,
        2.9e-8,
        3.1e-8,
        1e-40,
        -1e-45,
        1e-300,
        0x1.0020000000001p0,
        0x1.002p0,
        0x1.0010000000001p0,
        0x1.00800001p-130,
        1 + 0x1p-24 + 0x1p-40,
    };
    private static final long[] INTS = {
        Long.MIN_VALUE,
        Long.MAX_VALUE,
        0,
        -1,
        1,
        127,
        128,
        -128,
        -129,
        255,
        256,
        32767,
        32768,
        -32769,
        65504,
        65519,
        65520,
        65535,
        (1L << 24) + 1,
        (1L << 25) + (1L << 17) + 1,
        (1L << 25) + (1L << 17),
        (1L << 31) - 1,
        -(1L << 31),
        (1L << 53) + 1,
        -(1L << 40) - 3,
        1L << 62,
        4095,
        4097,
        2049,
        2051,
        -2049,
    };
    private static final int N = 120;

    private static NDArray input(DType t, long seed) {
        NDArray a = NDArray.allocate(t, N);
        SplittableRandom r = new SplittableRandom(seed);
        for (int i = 0; i < N; i++) {
            if (t.isFloat()) {
                double v = i < FLOATS.length ? FLOATS[i] : (r.nextDouble() * 2 - 1) * Math.pow(10, r.nextInt(-6, 12));
                a.setDouble(v, i);
            } else if (t.isBool()) {
                a.setLong(r.nextInt(2), i);
            } else {
                long v = i < INTS.length ? INTS[i] : r.nextLong() >> r.nextInt(0, 63);
                a.setLong(v, i);
            }
        }
        return a;
    }

    @ParameterizedTest
    @EnumSource(DType.class)
    void castsFromEveryTypeToEveryTypeMatchBitForBit(DType from) {
        List<Function<List<Expr>, Expr>> ops = new ArrayList<>();
        for (DType to : DType.values()) {
            if (to != from) ops.add(x -> x.get(0).cast(to));
        }
        for (ForKind kind : List.of(ForKind.SERIAL, ForKind.VECTORIZED)) {
            PrimFunc f = Funcs.elementwise("cast_" + from + "_" + kind.displayName(), kind, N, List.of(from), ops);
            List<NDArray> args = new ArrayList<>();
            args.add(input(from, from.ordinal()));
            for (int k = 1; k < f.params().size(); k++)
                args.add(NDArray.allocate(f.params().get(k)));
            JitCheck.matches(f, args, 0, 0, JitOptions.defaults());
        }
    }
}
