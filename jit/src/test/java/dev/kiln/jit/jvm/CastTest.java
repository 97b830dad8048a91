package dev.kiln.jit.jvm;

import dev.kiln.ir.DType;
import dev.kiln.ir.Expr;
import dev.kiln.runtime.NDArray;
import dev.kiln.tir.ForKind;
import dev.kiln.tir.PrimFunc;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Every cast from every dtype to every other, on edge values (NaN, infinities, signed zeros,
 * values beyond every integer range, halfway cases of float16 and bfloat16, integer extremes),
 * serial and vectorized, bit for bit against the interpreter: saturation, wrapping, NaN to 0 and
 * to true, and one rounding to nearest even.
 */
class CastTest {
    private static final double[] FLOAT_EDGES = {
        Double.NaN,
        Double.POSITIVE_INFINITY,
        Double.NEGATIVE_INFINITY,
        0.0,
        -0.0,
        1e10,
        -1e10,
        3e9,
        -3e9,
        300.7,
        -129.5,
        127.5,
        255.5,
        65504,
        65520,
        70000,
        -70000,
        1e-8,
        -1e-8,
        2.5,
        -2.5,
        0.5,
        1 + 0x1p-11,
        1 + 0x1p-8,
        1 + 3 * 0x1p-9,
        9.3e18,
        -9.3e18,
        0x1p-20,
        1.0 / 3,
        0x1.FFp127,
        3.4e38,
        -32768.9,
        40000.2
    };
    private static final long[] INT_EDGES = {
        0,
        1,
        -1,
        127,
        -128,
        128,
        255,
        256,
        -129,
        32767,
        -32768,
        65535,
        2047,
        2049,
        4097,
        16777217,
        Integer.MAX_VALUE,
        Integer.MIN_VALUE,
        Long.MAX_VALUE,
        Long.MIN_VALUE,
        9007199254740993L,
        -9007199254740993L,
        123456789012L,
        33,
        7
    };

    @ParameterizedTest
    @EnumSource(DType.class)
    void castsOfEdgeValuesMatchTheInterpreter(DType from) {
        int n = from.isFloat() ? FLOAT_EDGES.length : INT_EDGES.length;
        List<Function<List<Expr>, Expr>> ops = new ArrayList<>();
        for (DType to : DType.values()) ops.add(x -> x.get(0).cast(to));
        for (ForKind kind : List.of(ForKind.SERIAL, ForKind.VECTORIZED)) {
            PrimFunc f = dev.kiln.jit.Funcs.elementwise(
                    "cast_" + from + "_" + kind.displayName(), kind, n, List.of(from), ops);
            List<NDArray> args = JvmCheck.randomArgs(f, 3);
            for (int i = 0; i < n; i++) {
                if (from.isFloat()) args.get(0).setDoubleFlat(FLOAT_EDGES[i], i);
                else args.get(0).setLongFlat(INT_EDGES[i], i);
            }
            try {
                JvmCheck.matches(f, args, 0, 0);
            } finally {
                for (NDArray a : args) a.close();
            }
        }
    }
}
