package dev.kiln.interp;

import static dev.kiln.interp.Ref.buf;
import static dev.kiln.interp.Ref.i32;
import static dev.kiln.interp.Ref.load;
import static dev.kiln.interp.Ref.store;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kiln.ir.Binary;
import dev.kiln.ir.BinaryOp;
import dev.kiln.ir.Buffer;
import dev.kiln.ir.DType;
import dev.kiln.ir.Expr;
import dev.kiln.ir.IntImm;
import dev.kiln.ir.KilnException;
import dev.kiln.ir.MemoryScope;
import dev.kiln.ir.Select;
import dev.kiln.ir.Var;
import dev.kiln.runtime.NDArray;
import dev.kiln.tir.Allocate;
import dev.kiln.tir.Evaluate;
import dev.kiln.tir.For;
import dev.kiln.tir.ForKind;
import dev.kiln.tir.IfThenElse;
import dev.kiln.tir.Let;
import dev.kiln.tir.PrimFunc;
import dev.kiln.tir.Seq;
import dev.kiln.tir.Stmt;
import dev.kiln.tir.ThreadAxis;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;

/** Statements, scoping, scratch memory, bounds checks and argument checks. */
class InterpreterStmtTest {
    private static final DType F32 = DType.FLOAT32;
    private static final DType I64 = DType.INT64;

    @Test
    void everyLoopKindRunsSeriallyInOrder() {
        Buffer out = buf("out", I64, 1);
        for (ForKind kind : ForKind.values()) {
            Var i = new Var("i");
            // out[0] = out[0] * 10 + i for i in 3..8: the digits show the order
            Stmt body = store(out, load(out, i32(0)).mul(10).add(i.cast(I64)), i32(0));
            ThreadAxis axis = kind == ForKind.THREAD_BOUND ? ThreadAxis.THREAD_X : null;
            PrimFunc f = new PrimFunc("order", List.of(out), new For(i, i32(3), i32(5), kind, axis, body));
            try (NDArray o = NDArray.allocate(I64, 1)) {
                Interpreter.run(f, o);
                assertEquals(34567, o.getLong(0), kind.toString());
            }
        }
        Var j = new Var("j");
        PrimFunc empty =
                new PrimFunc("empty", List.of(out), For.serial(j, i32(0), i32(0), store(out, IntImm.i64(9), i32(0))));
        try (NDArray o = NDArray.allocate(I64, 1)) {
            Interpreter.run(empty, o);
            assertEquals(0, o.getLong(0), "a loop of extent 0 runs no iteration");
        }
    }

    @Test
    void gpuStyleThreadBindingIsCheckedOnTheCpu() {
        // blockIdx.x over 3 blocks, threadIdx.x over 4 threads: out[b * 4 + t] = in[b * 4 + t] * 2
        Buffer in = buf("in", F32, 12);
        Buffer out = buf("out", F32, 12);
        Var b = new Var("bx");
        Var t = new Var("tx");
        Expr idx = b.mul(4).add(t);
        Stmt inner = new For(
                t,
                i32(0),
                i32(4),
                ForKind.THREAD_BOUND,
                ThreadAxis.THREAD_X,
                store(out, load(in, idx).mul(2.0), idx));
        PrimFunc f = new PrimFunc(
                "gpu", List.of(in, out), new For(b, i32(0), i32(3), ForKind.THREAD_BOUND, ThreadAxis.BLOCK_X, inner));
        try (NDArray x = NDArray.random(F32, 5, 12);
                NDArray y = NDArray.allocate(F32, 12)) {
            Interpreter.run(f, x, y);
            for (int k = 0; k < 12; k++) assertEquals(x.getDoubleFlat(k) * 2, y.getDoubleFlat(k), 0);
        }
    }

    @Test
    void letBindsAndNestedBindingsOfOneVariableShadow() {
        Buffer in = buf("in", F32, 5);
        Buffer out = buf("out", F32, 5);
        Buffer cnt = buf("cnt", I64, 5);
        Var i = new Var("i");
        Var t = new Var("t", F32);
        // let t = in[i] * 3 in out[i] = t + t; then an inner loop that reuses the variable i
        Stmt inner = For.serial(i, i32(0), i32(2), store(cnt, load(cnt, i).add(1L), i));
        Stmt body = Seq.of(
                new Let(t, load(in, i).mul(3.0), store(out, t.add(t), i)),
                inner,
                store(cnt, load(cnt, i).add(100L), i));
        PrimFunc f = new PrimFunc("let", List.of(in, out, cnt), For.serial(i, i32(0), i32(5), body));
        try (NDArray x = NDArray.random(F32, 6, 5);
                NDArray y = NDArray.allocate(F32, 5);
                NDArray c = NDArray.allocate(I64, 5)) {
            Interpreter.run(f, x, y, c);
            for (int k = 0; k < 5; k++) {
                float v = (float) x.getDoubleFlat(k) * 3f;
                assertEquals(v + v, (float) y.getDoubleFlat(k));
            }
            // the inner loop adds 1 to cnt[0] and cnt[1] five times; the outer i is intact afterwards
            assertArrayEquals(new long[] {105, 105, 100, 100, 100}, c.toLongArray());
        }
    }

    @Test
    void ifThenElseTakesOneBranch() {
        Buffer in = buf("in", F32, 40);
        Buffer out = buf("out", F32, 40);
        Buffer pos = buf("pos", I64, 1);
        Var i = new Var("i");
        Stmt body = Seq.of(
                new IfThenElse(
                        load(in, i).gt(0.0),
                        store(out, load(in, i), i),
                        store(out, load(in, i).neg(), i)),
                IfThenElse.of(load(in, i).gt(0.0), store(pos, load(pos, i32(0)).add(1L), i32(0))));
        PrimFunc f = new PrimFunc("ite", List.of(in, out, pos), For.serial(i, i32(0), i32(40), body));
        try (NDArray x = NDArray.random(F32, 7, 40);
                NDArray y = NDArray.allocate(F32, 40);
                NDArray p = NDArray.allocate(I64, 1)) {
            Interpreter.run(f, x, y, p);
            long count = 0;
            for (int k = 0; k < 40; k++) {
                assertEquals(Math.abs(x.getDoubleFlat(k)), y.getDoubleFlat(k), 0);
                if (x.getDoubleFlat(k) > 0) count++;
            }
            assertEquals(count, p.getLong(0));
            assertTrue(count > 0 && count < 40);
        }
    }

    @Test
    void allocateGivesFreshZeroedScratchOnEveryEntry() {
        Buffer in = buf("in", F32, 6);
        Buffer out = buf("out", F32, 6);
        Buffer tmp = Buffer.rowMajor("tmp", F32, List.of(3L), MemoryScope.LOCAL);
        Var i = new Var("i");
        Var k = new Var("k");
        // tmp[k] += in[i] for k in 0..3, then out[i] = tmp[0] + tmp[1] + tmp[2]: 3 * in[i] only if tmp starts at 0
        Stmt fill = For.serial(k, i32(0), i32(3), store(tmp, load(tmp, k).add(load(in, i)), k));
        Stmt sum = store(out, load(tmp, i32(0)).add(load(tmp, i32(1))).add(load(tmp, i32(2))), i);
        PrimFunc f = new PrimFunc(
                "alloc", List.of(in, out), For.serial(i, i32(0), i32(6), new Allocate(tmp, Seq.of(fill, sum))));
        try (NDArray x = NDArray.random(F32, 8, 6);
                NDArray y = NDArray.allocate(F32, 6)) {
            Program p = Interpreter.compile(f);
            for (int rep = 0; rep < 2; rep++) {
                p.run(x, y);
                for (int n = 0; n < 6; n++) {
                    float v = (float) x.getDoubleFlat(n);
                    assertEquals((v + v) + v, (float) y.getDoubleFlat(n), "element " + n);
                }
            }
        }
    }

    @Test
    void evaluateRunsItsExpressionAndSelectAndLogicDoNotEvaluateTheOtherSide() {
        Buffer in = buf("in", F32, 4);
        Buffer out = buf("out", F32, 7);
        Buffer flags = buf("flags", DType.BOOL, 7);
        Var i = new Var("i");
        Expr inRange = i.lt(4);
        // in[i] for i >= 4 would be out of bounds: select, && and || must not evaluate it
        Stmt body = Seq.of(
                new Evaluate(load(out, i)),
                store(out, new Select(inRange, load(in, i), dev.kiln.ir.FloatImm.f32(-7)), i),
                store(flags, inRange.and(load(in, i).gt(0.0)).or(inRange.not().and(i.eq(5))), i));
        PrimFunc f = new PrimFunc("guard", List.of(in, out, flags), For.serial(i, i32(0), i32(7), body));
        try (NDArray x = NDArray.random(F32, 9, 4);
                NDArray y = NDArray.allocate(F32, 7);
                NDArray g = NDArray.allocate(DType.BOOL, 7)) {
            Interpreter.run(f, x, y, g);
            for (int k = 0; k < 7; k++) {
                assertEquals(k < 4 ? x.getDoubleFlat(k) : -7.0, y.getDoubleFlat(k), 0);
                boolean flag = k < 4 ? x.getDoubleFlat(k) > 0 : k == 5;
                assertEquals(flag ? 1 : 0, g.getLongFlat(k), "flag " + k);
            }
        }
        // Evaluate does evaluate: a division by zero inside it is reported
        Buffer n = buf("n", DType.INT32, 1);
        PrimFunc ev =
                new PrimFunc("ev", List.of(n), new Evaluate(new Binary(BinaryOp.FLOORDIV, i32(1), load(n, i32(0)))));
        try (NDArray z = NDArray.allocate(DType.INT32, 1)) {
            KilnException e = assertThrows(KilnException.class, () -> Interpreter.run(ev, z));
            assertTrue(e.getMessage().contains("floordiv(1, n[0])"), e.getMessage());
        }
    }

    @Test
    void accumulationsReadTheElementTheyWrite() {
        // acc[i] = acc[i] + in[i] (read-modify-write of one element) and
        // run[i] = run[i - 1] + in[i] for i >= 1 (a different element: a running sum)
        Buffer in = buf("in", F32, 9);
        Buffer acc = buf("acc", F32, 9);
        Buffer run = buf("run", F32, 9);
        Var i = new Var("i");
        Stmt body = Seq.of(
                store(acc, load(acc, i).add(load(in, i)), i),
                IfThenElse.of(i.ge(1), store(run, load(run, i.sub(1)).add(load(in, i)), i)));
        PrimFunc f = new PrimFunc("acc", List.of(in, acc, run), For.serial(i, i32(0), i32(9), body));
        try (NDArray x = NDArray.random(F32, 10, 9);
                NDArray a = NDArray.random(F32, 11, 9);
                NDArray r = NDArray.random(F32, 12, 9)) {
            float[] xs = x.toFloatArray();
            float[] as = a.toFloatArray();
            float[] rs = r.toFloatArray();
            Interpreter.run(f, x, a, r);
            for (int k = 0; k < 9; k++) {
                assertEquals(as[k] + xs[k], (float) a.getDoubleFlat(k));
                if (k >= 1) rs[k] = rs[k - 1] + xs[k];
            }
            assertArrayEquals(rs, r.toFloatArray());
        }
    }

    @Test
    void outOfBoundsAccessNamesBufferIndexAndDimension() {
        Buffer a = buf("A", F32, 4, 8);
        Buffer c = buf("C", F32, 4, 8);
        Var i = new Var("i");
        Var j = new Var("j");
        // reads A[i, j + 1]: j = 7 is out of bounds in dimension 1
        PrimFunc load = new PrimFunc(
                "shift",
                List.of(a, c),
                For.serial(i, i32(0), i32(4), For.serial(j, i32(0), i32(8), store(c, load(a, i, j.add(1)), i, j))));
        try (NDArray x = NDArray.random(F32, 1, 4, 8);
                NDArray y = NDArray.allocate(F32, 4, 8)) {
            KilnException e = assertThrows(KilnException.class, () -> Interpreter.run(load, x, y));
            assertEquals(
                    "out-of-bounds load from buffer 'A' (float32[4, 8]) in function 'shift': index [0, 8], "
                            + "dimension 1 index 8 is outside [0, 8)",
                    e.getMessage());
        }
        // stores C[i - 1, j]: i = 0 is out of bounds in dimension 0
        PrimFunc st = new PrimFunc(
                "back",
                List.of(a, c),
                For.serial(i, i32(0), i32(4), For.serial(j, i32(0), i32(8), store(c, load(a, i, j), i.sub(1), j))));
        try (NDArray x = NDArray.random(F32, 1, 4, 8);
                NDArray y = NDArray.allocate(F32, 4, 8)) {
            KilnException e = assertThrows(KilnException.class, () -> Interpreter.run(st, x, y));
            assertTrue(
                    e.getMessage()
                            .startsWith("out-of-bounds store to buffer 'C' (float32[4, 8]) in function 'back': "
                                    + "index [-1, 0], dimension 0 index -1 is outside [0, 4)"),
                    e.getMessage());
        }
    }

    @Test
    void argumentsAreCheckedBeforeAnythingRuns() {
        Buffer a = buf("A", F32, 4, 8);
        Buffer c = buf("C", F32, 4, 8);
        Var i = new Var("i");
        PrimFunc f = new PrimFunc(
                "copy", List.of(a, c), For.serial(i, i32(0), i32(4), store(c, load(a, i, i32(0)), i, i32(0))));
        try (NDArray x = NDArray.random(F32, 1, 4, 8);
                NDArray y = NDArray.allocate(F32, 4, 8);
                NDArray wrongType = NDArray.allocate(DType.FLOAT64, 4, 8);
                NDArray wrongShape = NDArray.allocate(F32, 8, 4);
                NDArray wrongStrides = NDArray.allocateStrided(F32, new long[] {4, 8}, new long[] {1, 4})) {
            assertMessage("function 'copy' takes 2 argument(s) [A, C] but got 1", () -> Interpreter.run(f, x));
            assertMessage(
                    "function 'copy', parameter 1 'C': expected dtype float32 but got float64 (NDArray(float64[4, 8]))",
                    () -> Interpreter.run(f, x, wrongType));
            assertMessage(
                    "function 'copy', parameter 0 'A': expected shape [4, 8] but got [8, 4] (NDArray(float32[8, 4]))",
                    () -> Interpreter.run(f, wrongShape, y));
            assertMessage(
                    "function 'copy', parameter 1 'C': expected strides [8, 1] but got [1, 4] (NDArray(float32[4, 8]))",
                    () -> Interpreter.run(f, x, wrongStrides));
            assertMessage(
                    "function 'copy', parameter 0 'A': expected float32[4, 8] with strides [8, 1] but got null",
                    () -> Interpreter.run(f, null, y));
            assertEquals(0.0, y.getDouble(0, 0), "nothing ran");
        }
        NDArray closed = NDArray.allocate(F32, 4, 8);
        closed.close();
        try (NDArray y = NDArray.allocate(F32, 4, 8)) {
            assertMessage(
                    "function 'copy', parameter 0 'A': the array NDArray(float32[4, 8]) has been closed",
                    () -> Interpreter.run(f, closed, y));
        }
    }

    private static void assertMessage(String expected, org.junit.jupiter.api.function.Executable run) {
        KilnException e = assertThrows(KilnException.class, run);
        assertEquals(expected, e.getMessage());
    }

    @Test
    void stridedParametersAreAddressedThroughTheirStrides() {
        // A is 3x5 stored column-major (strides [1, 3]); out = A^T row-major
        Buffer a = new Buffer("A", F32, List.of(i32(3), i32(5)), List.of(i32(1), i32(3)), MemoryScope.GLOBAL);
        Buffer t = buf("T", F32, 5, 3);
        Var i = new Var("i");
        Var j = new Var("j");
        PrimFunc f = new PrimFunc(
                "transpose",
                List.of(a, t),
                For.serial(i, i32(0), i32(5), For.serial(j, i32(0), i32(3), store(t, load(a, j, i), i, j))));
        try (NDArray x = NDArray.allocate(a);
                NDArray y = NDArray.allocate(F32, 5, 3)) {
            x.fillRandom(3);
            Interpreter.run(f, x, y);
            for (int r = 0; r < 5; r++)
                for (int s = 0; s < 3; s++) assertEquals(x.getDouble(s, r), y.getDouble(r, s), 0);
        }
    }

    @Test
    void compileErrorsNameWhatIsWrong() {
        Buffer a = buf("A", F32, 4);
        Buffer stray = buf("stray", F32, 4);
        Var i = new Var("i");
        Var free = new Var("free");
        KilnException e1 = assertThrows(
                KilnException.class,
                () -> Interpreter.compile(new PrimFunc("f", List.of(a), store(a, dev.kiln.ir.FloatImm.f32(1), free))));
        assertTrue(
                e1.getMessage().contains("variable 'free' (int32) is used in function 'f' outside any loop or let"),
                e1.getMessage());
        KilnException e2 = assertThrows(
                KilnException.class,
                () -> Interpreter.compile(
                        new PrimFunc("g", List.of(a), For.serial(i, i32(0), i32(4), store(a, load(stray, i), i)))));
        assertTrue(
                e2.getMessage()
                        .contains("buffer 'stray' is loaded from in function "
                                + "'g' but is neither a parameter nor allocated"),
                e2.getMessage());
        Buffer sym = new Buffer("S", F32, List.of(free), List.of(i32(1)), MemoryScope.GLOBAL);
        KilnException e3 = assertThrows(
                KilnException.class, () -> Interpreter.compile(new PrimFunc("h", List.of(sym), Seq.empty())));
        assertTrue(e3.getMessage().contains("buffer 'S' dim 0 is not constant"), e3.getMessage());
    }

    @Test
    void aCompiledProgramRunsConcurrently() throws Exception {
        Buffer a = buf("A", F32, 64);
        Buffer c = buf("C", F32, 64);
        Buffer tmp = Buffer.rowMajor("t", F32, List.of(1L), MemoryScope.LOCAL);
        Var i = new Var("i");
        Stmt body = new Allocate(
                tmp,
                Seq.of(
                        store(tmp, load(a, i).mul(load(a, i)), i32(0)),
                        store(c, load(tmp, i32(0)).add(1.0), i)));
        Program p = Interpreter.compile(new PrimFunc("sq", List.of(a, c), For.serial(i, i32(0), i32(64), body)));
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try {
            List<Future<Boolean>> results = new java.util.ArrayList<>();
            for (int t = 0; t < 8; t++) {
                long seed = t;
                results.add(pool.submit(() -> {
                    try (NDArray x = NDArray.random(F32, seed, 64);
                            NDArray y = NDArray.allocate(F32, 64)) {
                        for (int rep = 0; rep < 20; rep++) p.run(x, y);
                        for (int k = 0; k < 64; k++) {
                            float v = (float) x.getDoubleFlat(k);
                            if ((float) y.getDoubleFlat(k) != v * v + 1f) return false;
                        }
                        return true;
                    }
                }));
            }
            for (Future<Boolean> r : results) assertTrue(r.get());
        } finally {
            pool.shutdown();
        }
    }
}
