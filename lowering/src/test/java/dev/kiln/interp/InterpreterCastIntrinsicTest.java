package dev.kiln.interp;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.kiln.ir.Call;
import dev.kiln.ir.Cast;
import dev.kiln.ir.DType;
import dev.kiln.ir.Expr;
import dev.kiln.ir.Intrinsic;
import dev.kiln.runtime.NDArray;
import dev.kiln.tir.PrimFunc;
import java.util.ArrayList;
import java.util.List;
import java.util.function.DoubleUnaryOperator;
import org.apache.commons.math3.special.Erf;
import org.junit.jupiter.api.Test;

/** Casts between every pair of types and every intrinsic on every type, against plain Java. */
class InterpreterCastIntrinsicTest {
    private static final int N = 257;

    @Test
    void castsBetweenEveryPairOfTypes() {
        for (DType from : DType.values()) {
            try (NDArray in = Ref.wide(from, 61 + from.ordinal(), N, true)) {
                if (from.isFloat()) { // values around integer limits, and halves for truncation
                    double[] edge = {127.9, -128.9, 255.5, -0.7, 40000.0, -3e9, 3e9, 1e19, -1e19, 2.5, -2.5};
                    for (int k = 0; k < edge.length; k++) in.setDoubleFlat(edge[k], 5 + k);
                }
                for (DType to : DType.values()) {
                    PrimFunc f = Ref.elementwise("cast", to, List.of(from), N, x -> new Cast(to, x.get(0)));
                    try (NDArray out = Ref.run(f, to, N, in)) {
                        for (int i = 0; i < N; i++) {
                            String what = from + " -> " + to + " of element " + i;
                            if (from.isFloat()) {
                                double x = in.getDoubleFlat(i);
                                if (to.isFloat())
                                    Ref.assertSame(Ref.round(to, x), out.getDoubleFlat(i), what + " (" + x + ")");
                                else assertEquals(floatToIntRef(to, x), out.getLongFlat(i), what + " (" + x + ")");
                            } else {
                                long v = in.getLongFlat(i);
                                if (to.isFloat())
                                    Ref.assertSame(Ref.roundLong(to, v), out.getDoubleFlat(i), what + " (" + v + ")");
                                else assertEquals(Ref.wrap(to, v), out.getLongFlat(i), what + " (" + v + ")");
                            }
                        }
                    }
                }
            }
        }
    }

    /** Truncate toward zero and saturate, NaN is 0; to bool is x != 0. */
    private static long floatToIntRef(DType to, double x) {
        if (to == DType.BOOL) return x != 0 ? 1 : 0;
        if (Double.isNaN(x)) return 0;
        if (x >= to.maxInt()) return to.maxInt();
        if (x <= to.minInt()) return to.minInt();
        return (long) x;
    }

    @Test
    void unaryIntrinsicsOnEveryFloatType() {
        List<Object[]> fns = new ArrayList<>();
        fns.add(new Object[] {Intrinsic.EXP, (DoubleUnaryOperator) Math::exp});
        fns.add(new Object[] {Intrinsic.LOG, (DoubleUnaryOperator) Math::log});
        fns.add(new Object[] {Intrinsic.SQRT, (DoubleUnaryOperator) Math::sqrt});
        fns.add(new Object[] {Intrinsic.RSQRT, (DoubleUnaryOperator) x -> 1 / Math.sqrt(x)});
        fns.add(new Object[] {Intrinsic.TANH, (DoubleUnaryOperator) Math::tanh});
        fns.add(new Object[] {Intrinsic.SIGMOID, (DoubleUnaryOperator) x -> 1 / (1 + Math.exp(-x))});
        fns.add(new Object[] {Intrinsic.ERF, (DoubleUnaryOperator) x -> Double.isNaN(x) ? x : Erf.erf(x)});
        fns.add(new Object[] {Intrinsic.ABS, (DoubleUnaryOperator) Math::abs});
        fns.add(new Object[] {Intrinsic.FLOOR, (DoubleUnaryOperator) Math::floor});
        fns.add(new Object[] {Intrinsic.CEIL, (DoubleUnaryOperator) Math::ceil});
        fns.add(new Object[] {Intrinsic.ROUND, (DoubleUnaryOperator) Math::rint});
        for (DType t : Ref.FLOATS) {
            try (NDArray in = Ref.wide(t, 71, N, true)) {
                for (Object[] fn : fns) {
                    Intrinsic op = (Intrinsic) fn[0];
                    DoubleUnaryOperator ref = (DoubleUnaryOperator) fn[1];
                    PrimFunc f =
                            Ref.elementwise(op.displayName(), t, List.of(t), N, x -> new Call(op, List.of(x.get(0))));
                    try (NDArray out = Ref.run(f, t, N, in)) {
                        for (int i = 0; i < N; i++) {
                            double x = in.getDoubleFlat(i);
                            Ref.assertSame(
                                    Ref.round(t, ref.applyAsDouble(x)),
                                    out.getDoubleFlat(i),
                                    t + " " + op + "(" + x + ")");
                        }
                    }
                }
            }
        }
    }

    @Test
    void roundIsHalfToEven() {
        PrimFunc f = Ref.elementwise(
                "round", DType.FLOAT32, List.of(DType.FLOAT32), 6, x -> new Call(Intrinsic.ROUND, List.of(x.get(0))));
        try (NDArray in = NDArray.fromFloats(new float[] {0.5f, 1.5f, 2.5f, -0.5f, -1.5f, 2.4999998f}, 6);
                NDArray out = Ref.run(f, DType.FLOAT32, 6, in)) {
            float[] r = out.toFloatArray();
            assertEquals(0f, r[0]);
            assertEquals(2f, r[1]);
            assertEquals(2f, r[2]);
            assertEquals(-0f, r[3]);
            assertEquals(-2f, r[4]);
            assertEquals(2f, r[5]);
        }
    }

    @Test
    void powAndFmaOnEveryFloatType() {
        for (DType t : Ref.FLOATS) {
            try (NDArray a = Ref.wide(t, 81, N, true);
                    NDArray b = Ref.wide(t, 82, N, false);
                    NDArray c = Ref.wide(t, 83, N, true)) {
                PrimFunc pow = Ref.elementwise(
                        "pow", t, List.of(t, t), N, x -> new Call(Intrinsic.POW, List.of(x.get(0), x.get(1))));
                PrimFunc fma = Ref.elementwise(
                        "fma",
                        t,
                        List.of(t, t, t),
                        N,
                        x -> new Call(Intrinsic.FMA, List.of(x.get(0), x.get(1), x.get(2))));
                try (NDArray p = Ref.run(pow, t, N, a, b);
                        NDArray m = Ref.run(fma, t, N, a, b, c)) {
                    for (int i = 0; i < N; i++) {
                        double x = a.getDoubleFlat(i);
                        double y = b.getDoubleFlat(i);
                        double z = c.getDoubleFlat(i);
                        Ref.assertSame(
                                Ref.round(t, Math.pow(x, y)), p.getDoubleFlat(i), t + " pow(" + x + ", " + y + ")");
                        double fmaRef = t == DType.FLOAT32
                                ? Math.fma((float) x, (float) y, (float) z)
                                : Ref.round(t, Math.fma(x, y, z));
                        Ref.assertSame(fmaRef, m.getDoubleFlat(i), t + " fma(" + x + ", " + y + ", " + z + ")");
                    }
                }
            }
        }
        // fma rounds once: (1 + 2^-23)^2 - (1 + 2^-22) is 2^-46 fused, 0 when rounded twice
        float e = 1 + 0x1p-23f;
        PrimFunc fma = Ref.elementwise(
                "fma1",
                DType.FLOAT32,
                List.of(DType.FLOAT32, DType.FLOAT32, DType.FLOAT32),
                1,
                x -> new Call(Intrinsic.FMA, List.of(x.get(0), x.get(1), x.get(2))));
        try (NDArray a = NDArray.fromFloats(new float[] {e}, 1);
                NDArray c = NDArray.fromFloats(new float[] {-(1 + 0x1p-22f)}, 1);
                NDArray out = Ref.run(fma, DType.FLOAT32, 1, a, a, c)) {
            assertEquals(0x1p-46, out.getDouble(0));
        }
    }

    @Test
    void integerAbsWraps() {
        for (DType t : Ref.INTS) {
            PrimFunc f =
                    Ref.elementwise("abs", t, List.of(t), N, x -> new Call(Intrinsic.ABS, List.<Expr>of(x.get(0))));
            try (NDArray in = Ref.wide(t, 91, N, true);
                    NDArray out = Ref.run(f, t, N, in)) {
                for (int i = 0; i < N; i++) {
                    long v = in.getLongFlat(i);
                    long expected =
                            switch (t) {
                                case INT8 -> (byte) Math.abs((byte) v);
                                case INT16 -> (short) Math.abs((short) v);
                                case INT32 -> Math.abs((int) v);
                                case INT64 -> Math.abs(v);
                                default -> v;
                            };
                    assertEquals(expected, out.getLongFlat(i), t + " abs(" + v + ")");
                }
            }
        }
    }
}
