package dev.kiln.interp;

import static dev.kiln.te.Te.bool;
import static dev.kiln.te.Te.compute;
import static dev.kiln.te.Te.computeMulti;
import static dev.kiln.te.Te.placeholder;
import static dev.kiln.te.Te.reduceAxis;
import static dev.kiln.te.Te.shape;
import static dev.kiln.te.Te.sum;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kiln.ir.Buffer;
import dev.kiln.ir.DType;
import dev.kiln.ir.Expr;
import dev.kiln.ir.IntImm;
import dev.kiln.ir.IterVar;
import dev.kiln.ir.KilnException;
import dev.kiln.ir.MemoryScope;
import dev.kiln.ir.Reducer;
import dev.kiln.ir.Var;
import dev.kiln.lower.LowerDefault;
import dev.kiln.runtime.NDArray;
import dev.kiln.te.Te;
import dev.kiln.te.Tensor;
import dev.kiln.tir.For;
import dev.kiln.tir.PrimFunc;
import dev.kiln.tir.Store;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Computations built with the DSL, lowered by LowerDefault and interpreted, against plain-Java loops. */
class InterpreterLoweredTest {
    private static final DType F32 = DType.FLOAT32;

    @Test
    void matmulMatchesJavaLoopsExactlyAndDoubleWithinTolerance() {
        int[][] shapes = {{1, 1, 1}, {7, 5, 3}, {16, 33, 9}, {32, 32, 32}};
        for (int[] s : shapes) {
            int m = s[0], k = s[1], n = s[2];
            Tensor a = placeholder("A", F32, m, k);
            Tensor b = placeholder("B", F32, k, n);
            IterVar r = reduceAxis(k, "k");
            Tensor c = compute("C", shape(m, n), (i, j) -> sum(r, a.at(i, r).mul(b.at(r, j))));
            PrimFunc f = LowerDefault.lower("matmul", List.of(a, b, c));
            try (NDArray x = NDArray.random(F32, 100 + m, m, k);
                    NDArray y = NDArray.random(F32, 200 + n, k, n);
                    NDArray z = NDArray.allocate(F32, m, n);
                    NDArray same = NDArray.allocate(F32, m, n);
                    NDArray precise = NDArray.allocate(DType.FLOAT64, m, n)) {
                Interpreter.run(f, x, y, z);
                for (int i = 0; i < m; i++) {
                    for (int j = 0; j < n; j++) {
                        float acc = 0;
                        double dacc = 0;
                        for (int q = 0; q < k; q++) {
                            acc += (float) x.getDouble(i, q) * (float) y.getDouble(q, j);
                            dacc += x.getDouble(i, q) * y.getDouble(q, j);
                        }
                        same.setDouble(acc, i, j);
                        precise.setDouble(dacc, i, j);
                    }
                }
                // Same order of float32 operations: bit-identical.
                z.assertClose(same, 0, 0);
                // Against float64 accumulation: float32 rounding of <= 33 products of values in [-1, 1).
                try (NDArray zd = NDArray.allocate(DType.FLOAT64, m, n)) {
                    for (long e = 0; e < m * n; e++) zd.setDoubleFlat(z.getDoubleFlat(e), e);
                    zd.assertClose(precise, 1e-5, 1e-5);
                }
            }
        }
    }

    @Test
    void intermediateStagesAreAllocated() {
        int m = 5, k = 6, n = 7;
        Tensor a = placeholder("A", F32, m, k);
        Tensor b = placeholder("B", F32, k, n);
        Tensor bias = placeholder("bias", F32, n);
        IterVar r = reduceAxis(k, "k");
        Tensor c = compute("C", shape(m, n), (i, j) -> sum(r, a.at(i, r).mul(b.at(r, j))));
        Tensor d = compute("D", shape(m, n), (i, j) -> Te.maximum(c.at(i, j).add(bias.at(j)), Te.f32(0)));
        PrimFunc f = LowerDefault.lower("dense_relu", List.of(a, b, bias, d));
        try (NDArray x = NDArray.random(F32, 1, m, k);
                NDArray y = NDArray.random(F32, 2, k, n);
                NDArray z = NDArray.random(F32, 3, n);
                NDArray out = NDArray.allocate(F32, m, n);
                NDArray expected = NDArray.allocate(F32, m, n)) {
            Interpreter.run(f, x, y, z, out);
            for (int i = 0; i < m; i++) {
                for (int j = 0; j < n; j++) {
                    float acc = 0;
                    for (int q = 0; q < k; q++) acc += (float) x.getDouble(i, q) * (float) y.getDouble(q, j);
                    expected.setDouble(Math.max(acc + (float) z.getDouble(j), 0f), i, j);
                }
            }
            out.assertClose(expected, 0, 0);
            assertTrue(out.compareTo(expected, 0, 0).maxAbsError() == 0);
        }
    }

    @Test
    void reductionWithAConditionOnTheAxes() {
        for (int n : new int[] {1, 9, 24}) {
            Tensor a = placeholder("A", F32, n, n);
            IterVar k = reduceAxis(n, "k");
            // lower-triangular row sums: sum of A[i, k] over k <= i
            Tensor s = compute("S", shape(n), i -> sum(List.of(k), a.at(i, k), k.le(i)));
            PrimFunc f = LowerDefault.lower("trisum", List.of(a, s));
            try (NDArray x = NDArray.random(F32, n, n, n);
                    NDArray y = NDArray.allocate(F32, n);
                    NDArray expected = NDArray.allocate(F32, n)) {
                Interpreter.run(f, x, y);
                for (int i = 0; i < n; i++) {
                    float acc = 0;
                    for (int q = 0; q <= i; q++) acc += (float) x.getDouble(i, q);
                    expected.setDouble(acc, i);
                }
                y.assertClose(expected, 0, 0);
            }
        }
    }

    @Test
    void reductionWithAConditionOnTheData() {
        int m = 11, n = 13;
        Tensor a = placeholder("A", DType.INT32, m, n);
        IterVar k = reduceAxis(n, "k");
        // sum of the positive entries of each row, in int32
        Tensor s = compute(
                "P", shape(m), i -> sum(List.of(k), a.at(i, k), a.at(i, k).gt(0)));
        PrimFunc f = LowerDefault.lower("possum", List.of(a, s));
        try (NDArray x = NDArray.random(DType.INT32, 4, m, n);
                NDArray y = NDArray.allocate(DType.INT32, m)) {
            Interpreter.run(f, x, y);
            for (int i = 0; i < m; i++) {
                long acc = 0;
                for (int q = 0; q < n; q++) if (x.getLong(i, q) > 0) acc += x.getLong(i, q);
                assertEquals(acc, y.getLong(i), "row " + i);
            }
        }
    }

    @Test
    void argmaxWithATwoValueReducer() {
        int m = 9, n = 17;
        Reducer argmax = Reducer.of(
                "argmax",
                List.of(F32, DType.INT32),
                (x, y) -> List.of(
                        Te.select(y.get(0).gt(x.get(0)), y.get(0), x.get(0)),
                        Te.select(y.get(0).gt(x.get(0)), y.get(1), x.get(1))),
                List.of(Reducer.lowest(F32), IntImm.i32(-1)));
        Tensor a = placeholder("A", F32, m, n);
        IterVar k = reduceAxis(n, "k");
        List<Tensor> outs = computeMulti(
                "argmax", shape(m), ax -> argmax.reduce(List.of(a.at(ax.get(0), k), k), List.of(k), bool(true)));
        PrimFunc f = LowerDefault.lower("argmax", List.of(a, outs.get(0), outs.get(1)));
        try (NDArray x = NDArray.random(F32, 5, m, n);
                NDArray val = NDArray.allocate(F32, m);
                NDArray idx = NDArray.allocate(DType.INT32, m)) {
            // ties: row 2 has its maximum twice; the first index must win
            x.setDouble(2.0, 2, 3);
            x.setDouble(2.0, 2, 11);
            Interpreter.run(f, x, val, idx);
            for (int i = 0; i < m; i++) {
                double best = Double.NEGATIVE_INFINITY;
                int at = -1;
                for (int q = 0; q < n; q++) {
                    if (x.getDouble(i, q) > best) {
                        best = x.getDouble(i, q);
                        at = q;
                    }
                }
                assertEquals(best, val.getDouble(i), 0, "max of row " + i);
                assertEquals(at, idx.getLong(i), "argmax of row " + i);
            }
            assertEquals(3, idx.getLong(2));
        }
    }

    @Test
    void int8SumWrapsAndFloat16SumRoundsEveryStep() {
        int m = 6, n = 64;
        Tensor a = placeholder("A", DType.INT8, m, n);
        IterVar k = reduceAxis(n, "k");
        Tensor s = compute("S", shape(m), i -> sum(k, a.at(i, k)));
        try (NDArray x = Ref.wide(DType.INT8, 7, m * n, false);
                NDArray x2 = NDArray.allocate(DType.INT8, m, n);
                NDArray y = NDArray.allocate(DType.INT8, m)) {
            for (int e = 0; e < m * n; e++) x2.setLongFlat(x.getLongFlat(e), e);
            Interpreter.run(LowerDefault.lower("sum8", List.of(a, s)), x2, y);
            boolean wrapped = false;
            for (int i = 0; i < m; i++) {
                byte acc = 0;
                long wide = 0;
                for (int q = 0; q < n; q++) {
                    acc += (byte) x2.getLong(i, q);
                    wide += x2.getLong(i, q);
                }
                assertEquals(acc, y.getLong(i), "row " + i);
                wrapped |= wide != acc;
            }
            assertTrue(wrapped, "the test data overflows int8");
        }
        Tensor h = placeholder("H", DType.FLOAT16, m, n);
        IterVar kh = reduceAxis(n, "k");
        Tensor hs = compute("HS", shape(m), i -> sum(kh, h.at(i, kh).mul(Te.constant(DType.FLOAT16, 37.3))));
        try (NDArray x = NDArray.random(DType.FLOAT16, 8, m, n);
                NDArray y = NDArray.allocate(DType.FLOAT16, m)) {
            Interpreter.run(LowerDefault.lower("sum16", List.of(h, hs)), x, y);
            float c = Float.float16ToFloat(Float.floatToFloat16(37.3f));
            for (int i = 0; i < m; i++) {
                float acc = 0;
                for (int q = 0; q < n; q++) {
                    float p = Float.float16ToFloat(Float.floatToFloat16((float) x.getDouble(i, q) * c));
                    acc = Float.float16ToFloat(Float.floatToFloat16(acc + p));
                }
                assertEquals(acc, (float) y.getDouble(i), "row " + i);
            }
        }
    }

    @Test
    void maxAndMinReductionsStartFromTheirIdentity() {
        int m = 4, n = 10;
        Tensor a = placeholder("A", DType.INT16, m, n);
        IterVar k1 = reduceAxis(n, "k");
        IterVar k2 = reduceAxis(n, "k");
        Tensor mx = compute("MX", shape(m), i -> Te.max(k1, a.at(i, k1)));
        Tensor mn = compute("MN", shape(m), i -> Te.min(k2, a.at(i, k2)));
        PrimFunc f = LowerDefault.lower("minmax", List.of(a, mx, mn));
        try (NDArray x = NDArray.random(DType.INT16, 9, m, n);
                NDArray hi = NDArray.allocate(DType.INT16, m);
                NDArray lo = NDArray.allocate(DType.INT16, m)) {
            Interpreter.run(f, x, hi, lo);
            for (int i = 0; i < m; i++) {
                long h = Long.MIN_VALUE, l = Long.MAX_VALUE;
                for (int q = 0; q < n; q++) {
                    h = Math.max(h, x.getLong(i, q));
                    l = Math.min(l, x.getLong(i, q));
                }
                assertEquals(h, hi.getLong(i));
                assertEquals(l, lo.getLong(i));
            }
        }
    }

    @Test
    void unloweredTensorReadsAndReductionsAreRejected() {
        Tensor a = placeholder("A", F32, 4);
        Buffer out = Buffer.rowMajor("out", F32, List.of(4L), MemoryScope.GLOBAL);
        Var i = new Var("i");
        PrimFunc read = new PrimFunc(
                "raw", List.of(out), For.serial(i, IntImm.i32(0), IntImm.i32(4), new Store(out, List.of(i), a.at(i))));
        KilnException e = assertThrows(KilnException.class, () -> Interpreter.compile(read));
        assertTrue(e.getMessage().contains("function 'raw' still contains a tensor read of 'A': A[i]"), e.getMessage());
        assertTrue(e.getMessage().contains("LowerDefault"), e.getMessage());
        IterVar k = reduceAxis(4, "k");
        Expr red = sum(k, a.at(k));
        PrimFunc reduce = new PrimFunc(
                "red", List.of(out), For.serial(i, IntImm.i32(0), IntImm.i32(4), new Store(out, List.of(i), red)));
        KilnException e2 = assertThrows(KilnException.class, () -> Interpreter.compile(reduce));
        assertTrue(
                e2.getMessage().contains("function 'red' still contains a reduction: sum(A[k], axis=[k])"),
                e2.getMessage());
    }
}
