package dev.kiln.interp;

import static dev.kiln.interp.Ref.buf;
import static dev.kiln.interp.Ref.i32;
import static dev.kiln.interp.Ref.load;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kiln.ir.Buffer;
import dev.kiln.ir.DType;
import dev.kiln.ir.Expr;
import dev.kiln.ir.FloatImm;
import dev.kiln.ir.IntImm;
import dev.kiln.ir.KilnException;
import dev.kiln.ir.Var;
import dev.kiln.runtime.NDArray;
import dev.kiln.tir.For;
import dev.kiln.tir.PrimFunc;
import dev.kiln.tir.Seq;
import dev.kiln.tir.Stmt;
import dev.kiln.tir.Store;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * The innermost loop of a reduction whose term is a load or a product of two from flat buffers runs as one Java
 * loop ({@code DotNodes.DotLoop}): the same numbers as plain Java bit for bit (int32 with wrapping, float32 sums,
 * float32 products summed in float64 as references do), indices moved along packed layouts, and an index that
 * leaves its buffer part-way reported as before.
 */
class InterpreterDotLoopTest {
    private static Stmt accumulate(Buffer b, Expr value, Expr idx) {
        return new Store(b, List.of(idx), load(b, idx).add(value));
    }

    /** out[o] = sum over rc of int32(x[rc]) * int32(w[packed(o, rc)]), u8 x i8, w in 16 x 4 blocks. */
    @Test
    void aPackedInt8DotIsExact() {
        int outs = 32, k = 24;
        Buffer x = buf("x", DType.UINT8, k), w = buf("w", DType.INT8, outs * k), out = buf("out", DType.INT32, outs);
        Var o = new Var("o"), rc = new Var("rc");
        Expr wi = o.floordiv(16)
                .mul(k * 16)
                .add(rc.floordiv(4).mul(64))
                .add(o.floormod(16).mul(4))
                .add(rc.floormod(4));
        Expr term = load(x, rc).cast(DType.INT32).mul(load(w, wi).cast(DType.INT32));
        Stmt body =
                Seq.of(new Store(out, List.of(o), i32(7)), For.serial(rc, i32(0), i32(k), accumulate(out, term, o)));
        PrimFunc f = new PrimFunc("qdot", List.of(x, w, out), For.serial(o, i32(0), i32(outs), body));
        SplittableRandom rng = new SplittableRandom(3);
        byte[] xs = new byte[k], ws = new byte[outs * k];
        rng.nextBytes(xs);
        rng.nextBytes(ws);
        try (NDArray a = NDArray.allocate(DType.UINT8, k);
                NDArray b = NDArray.allocate(DType.INT8, outs * k);
                NDArray c = NDArray.allocate(DType.INT32, outs)) {
            for (int i = 0; i < k; i++) a.setLongFlat(xs[i] & 0xFF, i);
            for (int i = 0; i < ws.length; i++) b.setLongFlat(ws[i], i);
            Interpreter.run(f, a, b, c);
            for (int oo = 0; oo < outs; oo++) {
                int s = 7;
                for (int r = 0; r < k; r++) {
                    int wv = ws[(oo / 16) * k * 16 + (r / 4) * 64 + (oo % 16) * 4 + r % 4];
                    s += (xs[r] & 0xFF) * wv;
                }
                assertEquals(s, c.getLong(oo), "o=" + oo);
            }
        }
    }

    /** out[i] = sum over r of a[i + r] * w[r]: float32 sums, and float32 products summed in float64. */
    @Test
    void floatSumsAreTheSameBitForBitAsPlainJava() {
        int m = 19, kr = 301;
        SplittableRandom rng = new SplittableRandom(5);
        float[] av = new float[m + kr], wv = new float[kr];
        for (int i = 0; i < av.length; i++) av[i] = (float) rng.nextDouble(-1, 1);
        for (int i = 0; i < wv.length; i++) wv[i] = (float) rng.nextDouble(-1, 1);
        for (DType acc : List.of(DType.FLOAT32, DType.FLOAT64)) {
            Buffer a = buf("a", DType.FLOAT32, m + kr), w = buf("w", DType.FLOAT32, kr), c = buf("c", acc, m);
            Var i = new Var("i"), r = new Var("r");
            Expr p = load(a, i.add(r).add(1)).mul(load(w, r));
            if (acc == DType.FLOAT64) p = p.cast(DType.FLOAT64);
            Stmt init = new Store(c, List.of(i), acc == DType.FLOAT64 ? new FloatImm(acc, 0.5) : FloatImm.f32(0.5f));
            Stmt nest = For.serial(r, i32(0), i32(kr - 1), accumulate(c, p, i));
            PrimFunc f = new PrimFunc("dot", List.of(a, w, c), For.serial(i, i32(0), i32(m), Seq.of(init, nest)));
            try (NDArray an = NDArray.fromFloats(av, m + kr);
                    NDArray wn = NDArray.fromFloats(wv, kr);
                    NDArray cn = NDArray.allocate(acc, m)) {
                Interpreter.run(f, an, wn, cn);
                for (int ii = 0; ii < m; ii++) {
                    float sf = 0.5f;
                    double sd = 0.5;
                    for (int rr = 0; rr < kr - 1; rr++) {
                        float prod = av[ii + rr + 1] * wv[rr];
                        sf += prod;
                        sd += prod;
                    }
                    if (acc == DType.FLOAT32)
                        assertEquals(Float.floatToIntBits(sf), Float.floatToIntBits((float) cn.getDouble(ii)));
                    else assertEquals(Double.doubleToLongBits(sd), Double.doubleToLongBits(cn.getDouble(ii)));
                }
            }
        }
    }

    /** int32 products and sums that overflow wrap as Java's int arithmetic does. */
    @Test
    void int32SumsWrap() {
        int k = 50;
        Buffer x = buf("x", DType.INT32, k), w = buf("w", DType.INT32, 2 * k), out = buf("out", DType.INT32, 1);
        Var rc = new Var("rc");
        Stmt loop = For.serial(
                rc,
                i32(0),
                i32(k),
                accumulate(out, load(x, rc).mul(load(w, rc.mul(2).add(1))), i32(0)));
        PrimFunc f = new PrimFunc("wrap", List.of(x, w, out), Seq.of(new Store(out, List.of(i32(0)), i32(11)), loop));
        int[] xs = new int[k], ws = new int[2 * k];
        for (int i = 0; i < k; i++) xs[i] = 1_000_003 * (i + 1);
        for (int i = 0; i < 2 * k; i++) ws[i] = -700_001 * (i + 3);
        try (NDArray a = NDArray.fromInts(xs, k);
                NDArray b = NDArray.fromInts(ws, 2 * k);
                NDArray c = NDArray.allocate(DType.INT32, 1)) {
            Interpreter.run(f, a, b, c);
            int want = 11;
            for (int i = 0; i < k; i++) want += xs[i] * ws[2 * i + 1];
            assertEquals(want, c.getLong(0));
        }
    }

    /** A sum of loads (a pooling or mean's) in int64 and float64, from a loop that does not start at 0. */
    @Test
    void aSumOfLoadsFromAnOffsetLoop() {
        int n = 40;
        Buffer a = buf("a", DType.INT16, n), s = buf("s", DType.INT64, 1);
        Var r = new Var("r");
        Stmt loop = For.serial(
                r, i32(5), i32(30), accumulate(s, load(a, r.mul(-1).add(n - 1)).cast(DType.INT64), i32(0)));
        PrimFunc f = new PrimFunc("sum", List.of(a, s), Seq.of(new Store(s, List.of(i32(0)), IntImm.i64(-3)), loop));
        try (NDArray an = NDArray.allocate(DType.INT16, n);
                NDArray sn = NDArray.allocate(DType.INT64, 1)) {
            for (int i = 0; i < n; i++) an.setLongFlat((i * 977) % 30011 - 15000, i);
            Interpreter.run(f, an, sn);
            long want = -3;
            for (int rr = 5; rr < 35; rr++) want += ((n - 1 - rr) * 977) % 30011 - 15000;
            assertEquals(want, sn.getLong(0));
        }
    }

    /** w is read one element past its end at the loop's last step: the same error as the plain loop's. */
    @Test
    void anIndexThatLeavesItsBufferPartWayIsReportedAsBefore() {
        int k = 9;
        Buffer x = buf("x", DType.INT32, k), w = buf("w", DType.INT32, k - 1), out = buf("out", DType.INT32, 1);
        Var rc = new Var("rc");
        Stmt loop = For.serial(rc, i32(0), i32(k), accumulate(out, load(x, rc).mul(load(w, rc)), i32(0)));
        PrimFunc f = new PrimFunc("past", List.of(x, w, out), Seq.of(new Store(out, List.of(i32(0)), i32(0)), loop));
        try (NDArray a = NDArray.allocate(DType.INT32, k);
                NDArray b = NDArray.allocate(DType.INT32, k - 1);
                NDArray c = NDArray.allocate(DType.INT32, 1)) {
            KilnException e = assertThrows(KilnException.class, () -> Interpreter.run(f, a, b, c));
            assertTrue(e.getMessage().contains("out-of-bounds load from buffer 'w'"), e.getMessage());
            assertTrue(e.getMessage().contains("index 8 is outside [0, 8)"), e.getMessage());
        }
    }
}
