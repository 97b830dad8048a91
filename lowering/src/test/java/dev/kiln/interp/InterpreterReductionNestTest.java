package dev.kiln.interp;

import static dev.kiln.interp.Ref.buf;
import static dev.kiln.interp.Ref.i32;
import static dev.kiln.interp.Ref.load;
import static dev.kiln.interp.Ref.store;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kiln.ir.Buffer;
import dev.kiln.ir.DType;
import dev.kiln.ir.Expr;
import dev.kiln.ir.IntImm;
import dev.kiln.ir.KilnException;
import dev.kiln.ir.Var;
import dev.kiln.runtime.NDArray;
import dev.kiln.tir.For;
import dev.kiln.tir.Let;
import dev.kiln.tir.PrimFunc;
import dev.kiln.tir.Seq;
import dev.kiln.tir.Stmt;
import dev.kiln.tir.Store;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * A loop nest around one accumulation {@code B[I] = B[I] + e} (every float or int32/int64 sum of a default
 * lowering) keeps {@code B[I]} in a frame slot ({@code Compiler.reductionNest}): same results bit for bit as a store
 * per iteration, and only where that is so.
 */
class InterpreterReductionNestTest {
    private static final DType F32 = DType.FLOAT32;
    private static final DType F64 = DType.FLOAT64;

    private static Stmt accumulate(Buffer b, Expr value, Expr... idx) {
        return new Store(b, List.of(idx), load(b, idx).add(value));
    }

    /** {@code for i: C[i] = 0; for r: for c: C[i] = C[i] + A[i + r, c] * W[r, c]} (a 1-D conv over rows). */
    private static PrimFunc conv(DType acc, int m, int kr, int kc) {
        Buffer a = buf("A", F32, m + kr - 1, kc), w = buf("W", F32, kr, kc), c = buf("C", acc, m);
        Var i = new Var("i"), r = new Var("r"), q = new Var("c");
        Expr product = load(a, i.add(r), q).mul(load(w, r, q));
        if (acc == F64) product = product.cast(F64);
        Stmt nest = For.serial(r, i32(0), i32(kr), For.serial(q, i32(0), i32(kc), accumulate(c, product, i)));
        Stmt init =
                new Store(c, List.of(i), acc == F64 ? new dev.kiln.ir.FloatImm(F64, 0) : dev.kiln.ir.FloatImm.f32(0));
        return new PrimFunc("conv", List.of(a, w, c), For.serial(i, i32(0), i32(m), Seq.of(init, nest)));
    }

    @Test
    void aConvolutionsSumsAreTheSameBitForBitInFloat32AndFloat64() {
        int m = 37, kr = 3, kc = 29;
        SplittableRandom rng = new SplittableRandom(7);
        float[] av = new float[(m + kr - 1) * kc], wv = new float[kr * kc];
        for (int k = 0; k < av.length; k++) av[k] = (float) rng.nextDouble(-1, 1);
        for (int k = 0; k < wv.length; k++) wv[k] = (float) rng.nextDouble(-1, 1);
        for (DType acc : List.of(F32, F64)) {
            try (NDArray a = NDArray.fromFloats(av, m + kr - 1, kc);
                    NDArray w = NDArray.fromFloats(wv, kr, kc);
                    NDArray c = NDArray.allocate(acc, m)) {
                Interpreter.run(conv(acc, m, kr, kc), a, w, c);
                for (int i = 0; i < m; i++) {
                    float sf = 0;
                    double sd = 0;
                    for (int r = 0; r < kr; r++) {
                        for (int q = 0; q < kc; q++) {
                            float p = av[(i + r) * kc + q] * wv[r * kc + q];
                            sf += p;
                            sd += p;
                        }
                    }
                    if (acc == F32)
                        assertEquals(Float.floatToIntBits(sf), Float.floatToIntBits((float) c.getDouble(i)), "i=" + i);
                    else assertEquals(Double.doubleToLongBits(sd), Double.doubleToLongBits(c.getDouble(i)), "i=" + i);
                }
            }
        }
    }

    @Test
    void int32SumsWrapAsInt32AndInt64SumsDoNot() {
        int m = 5, k = 300;
        SplittableRandom rng = new SplittableRandom(11);
        long[] av = new long[m * k], bv = new long[k];
        for (int i = 0; i < av.length; i++) av[i] = rng.nextLong(-3_000_000_000L, 3_000_000_000L);
        for (int i = 0; i < k; i++) bv[i] = rng.nextInt(-40_000, 40_000);
        for (DType t : List.of(DType.INT32, DType.INT64)) {
            Buffer a = buf("A", t, m, k), b = buf("B", t, k), c = buf("C", t, m);
            Var i = new Var("i"), r = new Var("r");
            Stmt init = store(c, t == DType.INT32 ? IntImm.i32(0) : IntImm.i64(0), i);
            Stmt nest =
                    For.serial(r, i32(0), i32(k), accumulate(c, load(a, i, r).mul(load(b, r)), i));
            PrimFunc f = new PrimFunc("dot", List.of(a, b, c), For.serial(i, i32(0), i32(m), Seq.of(init, nest)));
            try (NDArray x = NDArray.allocate(t, m, k);
                    NDArray y = NDArray.allocate(t, k);
                    NDArray z = NDArray.allocate(t, m)) {
                for (int e = 0; e < av.length; e++) x.setLongFlat(av[e], e);
                for (int e = 0; e < k; e++) y.setLongFlat(bv[e], e);
                Interpreter.run(f, x, y, z);
                for (int row = 0; row < m; row++) {
                    int s32 = 0;
                    long s64 = 0;
                    for (int e = 0; e < k; e++) {
                        s32 += (int) x.getLongFlat(row * k + e) * (int) bv[e];
                        s64 += x.getLongFlat(row * k + e) * bv[e];
                    }
                    assertEquals(t == DType.INT32 ? s32 : s64, z.getLongFlat(row), t + " row " + row);
                }
            }
        }
        Buffer c = buf("C", DType.INT32, 1), a = buf("A", DType.INT32, 4);
        Var q = new Var("q");
        PrimFunc sum =
                new PrimFunc("sum", List.of(a, c), For.serial(q, i32(0), i32(4), accumulate(c, load(a, q), i32(0))));
        assertInstanceOf(
                MemoryNodes.ReductionNest.class, Interpreter.compile(sum).root());
    }

    @Test
    void theNestIsCompiledOnceAroundTheSlot() {
        Buffer c = buf("C", F32, 1), a = buf("A", F32, 4, 5);
        Var r = new Var("r"), q = new Var("q");
        PrimFunc f = new PrimFunc(
                "sum",
                List.of(a, c),
                For.serial(r, i32(0), i32(4), For.serial(q, i32(0), i32(5), accumulate(c, load(a, r, q), i32(0)))));
        assertInstanceOf(MemoryNodes.ReductionNest.class, Interpreter.compile(f).root());
        // Not a nest of this kind: the index moves with the loop, or a loop may run no iteration.
        Var k = new Var("k");
        PrimFunc moving =
                new PrimFunc("moving", List.of(a, c), For.serial(k, i32(0), i32(1), accumulate(c, load(a, k, k), k)));
        assertInstanceOf(StmtNodes.For.class, Interpreter.compile(moving).root());
        PrimFunc empty = new PrimFunc(
                "empty", List.of(a, c), For.serial(k, i32(0), i32(0), accumulate(c, load(a, k, k), i32(0))));
        assertInstanceOf(StmtNodes.For.class, Interpreter.compile(empty).root());
    }

    @Test
    void aValueThatReadsTheAccumulatedBufferSeesEveryStore() {
        // S[0] = S[0] + S[z] with z = 0 bound outside: each step doubles S[0] (1 -> 16 in four steps); holding S[0]
        // in a slot while reading memory would give 5.
        Buffer s = buf("S", F64, 2);
        Var z = new Var("z"), k = new Var("k");
        PrimFunc f = new PrimFunc(
                "doubling",
                List.of(s),
                new Let(z, i32(0), For.serial(k, i32(0), i32(4), accumulate(s, load(s, z), i32(0)))));
        assertInstanceOf(StmtNodes.LetLong.class, Interpreter.compile(f).root());
        try (NDArray a = NDArray.allocate(F64, 2)) {
            a.setDouble(1, 0);
            Interpreter.run(f, a);
            assertEquals(16.0, a.getDouble(0));
        }
    }

    @Test
    void anAccumulatorOutsideItsBufferIsReportedAsBefore() {
        Buffer c = buf("acc", F32, 4), a = buf("A", F32, 3);
        Var k = new Var("k");
        PrimFunc f =
                new PrimFunc("oob", List.of(a, c), For.serial(k, i32(0), i32(3), accumulate(c, load(a, k), i32(4))));
        try (NDArray x = NDArray.allocate(F32, 3);
                NDArray y = NDArray.allocate(F32, 4)) {
            KilnException e = assertThrows(KilnException.class, () -> Interpreter.run(f, x, y));
            assertTrue(e.getMessage().contains("store to buffer 'acc'"), e.getMessage());
            assertTrue(e.getMessage().contains("index 4 is outside [0, 4)"), e.getMessage());
        }
    }
}
