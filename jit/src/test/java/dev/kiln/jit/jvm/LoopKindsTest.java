package dev.kiln.jit.jvm;

import static dev.kiln.jit.Funcs.buf;
import static dev.kiln.jit.Funcs.i32;
import static dev.kiln.jit.Funcs.load;
import static dev.kiln.jit.Funcs.loop;
import static dev.kiln.jit.Funcs.store;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kiln.ir.Buffer;
import dev.kiln.ir.DType;
import dev.kiln.ir.Expr;
import dev.kiln.ir.FloatImm;
import dev.kiln.ir.IntImm;
import dev.kiln.ir.KilnException;
import dev.kiln.ir.Select;
import dev.kiln.ir.Var;
import dev.kiln.runtime.NDArray;
import dev.kiln.tir.Allocate;
import dev.kiln.tir.For;
import dev.kiln.tir.ForKind;
import dev.kiln.tir.IfThenElse;
import dev.kiln.tir.Let;
import dev.kiln.tir.PrimFunc;
import dev.kiln.tir.Seq;
import dev.kiln.tir.ThreadAxis;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Hand-built programs with vectorized, parallel and unrolled loops, each run through the JVM
 * backend and the interpreter on random inputs and compared bit for bit, plus the notes the
 * backend gives when it runs a loop differently from its annotation.
 */
class LoopKindsTest {
    private static final DType F32 = DType.FLOAT32;

    private static boolean usesVectors(JvmKernel k) {
        return k.source().contains("jdk/incubator/vector/FloatVector");
    }

    @Test
    void contiguousVectorLoopsOfOddExtentsUseVectorsWithAMaskedTail() {
        for (int n : new int[] {2, 3, 8, 13, 37, 100}) {
            Var i = new Var("i");
            Buffer a = buf("a", F32, n), b = buf("b", F32, n), c = buf("c", F32, n);
            PrimFunc f = new PrimFunc(
                    "add" + n,
                    List.of(a, b, c),
                    loop(
                            i,
                            n,
                            ForKind.VECTORIZED,
                            store(c, load(a, i).add(load(b, i)).mul(load(a, i)), i)));
            JvmKernel k = JvmCheck.exact(f, n);
            assertThat(usesVectors(k)).as("vector code for n = " + n).isTrue();
            assertThat(k.notes()).isEmpty();
        }
    }

    @Test
    void stridedAndIndirectAccessesRunLaneByLane() {
        Var i = new Var("i");
        int n = 13;
        Buffer a = buf("a", F32, 3 * n), b = buf("b", F32, n), out = buf("out", F32, 2 * n), o2 = buf("o2", F32, n);
        Expr body = load(a, i.mul(3L)).add(load(b, i.floordiv(2L))); // gather with stride 3, then floordiv index
        PrimFunc f = new PrimFunc(
                "strided",
                List.of(a, b, out, o2),
                loop(
                        i,
                        n,
                        ForKind.VECTORIZED,
                        Seq.of(
                                store(out, body, i.mul(2L).add(1L)), // scatter with stride 2
                                store(o2, load(b, i32(n - 1).sub(i)), i)))); // reversed
        JvmKernel k = JvmCheck.exact(f, 5);
        assertThat(usesVectors(k)).isTrue();
    }

    @Test
    void varyingConditionsMaskStoresAndLoadsWhileUniformOnesBranch() {
        Var r = new Var("r"), i = new Var("i");
        int rows = 5, n = 19;
        Buffer a = buf("a", F32, rows, n), bias = buf("bias", F32, rows + 2), out = buf("out", F32, rows, n);
        // the bias load is only valid where r < rows: the uniform part of the condition guards it
        Expr cond = i.lt(11L).and(r.lt((long) rows));
        PrimFunc f = new PrimFunc(
                "masked",
                List.of(a, bias, out),
                loop(
                        r,
                        rows + 3,
                        ForKind.SERIAL,
                        loop(
                                i,
                                n,
                                ForKind.VECTORIZED,
                                new IfThenElse(
                                        cond,
                                        store(
                                                out,
                                                load(a, r.min((long) rows - 1), i)
                                                        .add(load(bias, r.add(2L))),
                                                r.min((long) rows - 1),
                                                i),
                                        IfThenElse.of(
                                                r.lt((long) rows),
                                                store(
                                                        out,
                                                        new Select(
                                                                load(a, r, i).gt(0.0), load(a, r, i), FloatImm.f32(-1)),
                                                        r,
                                                        i))))));
        JvmKernel k = JvmCheck.exact(f, 6);
        assertThat(usesVectors(k)).isTrue();
    }

    @Test
    void theLoopVariableAsAValueAndVaryingLetsVectorize() {
        Var i = new Var("i"), t = new Var("t", F32), m = new Var("m", DType.BOOL);
        int n = 21;
        Buffer a = buf("a", F32, n), out = buf("out", F32, n), idx = buf("idx", DType.INT32, n);
        PrimFunc f = new PrimFunc(
                "lets",
                List.of(a, out, idx),
                loop(
                        i,
                        n,
                        ForKind.VECTORIZED,
                        new Let(
                                t,
                                load(a, i).mul(3.0),
                                new Let(
                                        m,
                                        t.gt(0.5),
                                        Seq.of(
                                                store(out, new Select(m, t.add(i.cast(F32)), t.sub(1.0)), i),
                                                store(
                                                        idx,
                                                        i.mul(7L).floordiv(3L).add(m.cast(DType.INT32)),
                                                        i))))));
        JvmKernel k = JvmCheck.exact(f, 7);
        assertThat(usesVectors(k)).isTrue();
    }

    @Test
    void int64LoopVariablesAndMixedWidthsVectorize() {
        Var i = new Var("i", DType.INT64);
        int n = 11;
        Buffer a = buf("a", DType.FLOAT64, n), b = buf("b", F32, n), out = buf("out", DType.FLOAT64, n);
        PrimFunc f = new PrimFunc(
                "wide",
                List.of(a, b, out),
                new For(
                        i,
                        IntImm.i64(0),
                        IntImm.i64(n),
                        ForKind.VECTORIZED,
                        null,
                        store(
                                out,
                                load(a, i).mul(load(b, i).cast(DType.FLOAT64)).add(i.cast(DType.FLOAT64)),
                                i)));
        JvmKernel k = JvmCheck.exact(f, 8);
        assertThat(k.source()).contains("jdk/incubator/vector/DoubleVector");
    }

    @Test
    void aReductionOverTheVectorizedLoopRunsSeriallyWithANote() {
        Var r = new Var("r"), k = new Var("k");
        Buffer a = buf("a", F32, 4, 9), sum = buf("sum", F32, 4);
        PrimFunc f = new PrimFunc(
                "rowsum",
                List.of(a, sum),
                loop(
                        r,
                        4,
                        ForKind.SERIAL,
                        Seq.of(
                                store(sum, FloatImm.f32(0), r),
                                loop(
                                        k,
                                        9,
                                        ForKind.VECTORIZED,
                                        store(sum, load(sum, r).add(load(a, r, k)), r)))));
        JvmKernel kern = JvmCheck.exact(f, 9);
        assertThat(kern.notes()).anyMatch(s -> s.contains("runs serially") && s.contains("same address in every lane"));
        assertThat(kern.source()).contains("// note: vectorized loop 'k'");
    }

    @Test
    void parallelLoopsWithPerIterationAllocationsRunOnThePool() {
        Var r = new Var("r"), c = new Var("c"), q = new Var("q");
        int rows = 64, cols = 40;
        Buffer a = buf("a", F32, rows, cols), out = buf("out", F32, rows, cols);
        Buffer tmp = buf("tmp", F32, cols);
        PrimFunc f = new PrimFunc(
                "par",
                List.of(a, out),
                loop(
                        r,
                        rows,
                        ForKind.PARALLEL,
                        new Allocate(
                                tmp,
                                Seq.of(
                                        loop(
                                                c,
                                                cols,
                                                ForKind.SERIAL,
                                                store(
                                                        tmp,
                                                        load(tmp, c)
                                                                .add(
                                                                        load(a, r, c)
                                                                                .mul(2.0)),
                                                        c)), // tmp starts at 0
                                        loop(
                                                c,
                                                cols,
                                                ForKind.VECTORIZED,
                                                store(
                                                        out,
                                                        load(tmp, c)
                                                                .add(
                                                                        load(
                                                                                tmp,
                                                                                i32(cols - 1)
                                                                                        .sub(c))),
                                                        r,
                                                        c)),
                                        loop(
                                                q,
                                                3,
                                                ForKind.PARALLEL,
                                                store(out, load(out, r, q).mul(load(a, r, q)), r, q))))));
        JvmKernel k = JvmCheck.exact(f, 10);
        assertThat(k.source()).contains("JvmSpinPool.run");
        assertThat(k.notes()).anyMatch(s -> s.contains("nested in another parallel loop"));
        for (int rep = 0; rep < 3; rep++) JvmCheck.exact(f, 11 + rep); // scratch is zeroed on every entry
    }

    @Test
    void oneKernelRunsFromSeveralThreadsAtOnce() throws Exception {
        Var r = new Var("r"), c = new Var("c");
        int rows = 48, cols = 33;
        Buffer a = buf("a", F32, rows, cols), out = buf("out", F32, rows, cols), tmp = buf("tmp", F32, cols);
        PrimFunc f = new PrimFunc(
                "concurrent",
                List.of(a, out),
                loop(
                        r,
                        rows,
                        ForKind.PARALLEL,
                        new Allocate(
                                tmp,
                                Seq.of(
                                        loop(
                                                c,
                                                cols,
                                                ForKind.VECTORIZED,
                                                store(tmp, load(tmp, c).add(load(a, r, c)), c)),
                                        loop(
                                                c,
                                                cols,
                                                ForKind.VECTORIZED,
                                                store(
                                                        out,
                                                        load(tmp, c)
                                                                .mul(
                                                                        load(
                                                                                tmp,
                                                                                i32(cols - 1)
                                                                                        .sub(c))),
                                                        r,
                                                        c))))));
        JvmKernel k = JvmCheck.BACKEND.compile(f, JvmCheck.TARGET);
        java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(4);
        try {
            List<java.util.concurrent.Future<?>> runs = new java.util.ArrayList<>();
            for (int t = 0; t < 4; t++) {
                long seed = 20 + t;
                runs.add(pool.submit(() -> {
                    for (int rep = 0; rep < 10; rep++) JvmCheck.matches(f, seed * 100 + rep, 0, 0);
                }));
            }
            for (var run : runs) run.get();
        } finally {
            pool.shutdown();
        }
        assertThat(k.notes()).isEmpty();
    }

    @Test
    void parallelLoopsRunOnTheForkJoinRuntimeWhenAskedAndABadRuntimeIsNamed() {
        Var r = new Var("r"), c = new Var("c");
        Buffer a = buf("a", F32, 64, 300), out = buf("out", F32, 64, 300);
        PrimFunc f = new PrimFunc(
                "fj",
                List.of(a, out),
                loop(
                        r,
                        64,
                        ForKind.PARALLEL,
                        loop(c, 300, ForKind.SERIAL, store(out, load(a, r, c).mul(2.0), r, c))));
        try {
            System.setProperty("kiln.jvm.parallel", "forkjoin");
            JvmBackend.clearCache();
            assertThat(JvmCheck.exact(f, 16).source()).contains("JvmParallel.run");
            System.setProperty("kiln.jvm.parallel", "threads");
            JvmBackend.clearCache();
            assertThatThrownBy(() -> JvmCheck.BACKEND.compile(f, JvmCheck.TARGET))
                    .isInstanceOf(KilnException.class)
                    .hasMessageContaining("kiln.jvm.parallel is 'threads'");
        } finally {
            System.clearProperty("kiln.jvm.parallel");
            JvmBackend.clearCache();
        }
        assertThat(JvmCheck.exact(f, 17).source()).contains("JvmSpinPool.run");
    }

    @Test
    void anAllocationWrittenWholeByItsFirstLoopNestIsNotClearedFirst() {
        int rows = 6, cols = 40;
        Buffer a = buf("a", F32, rows, cols), out = buf("out", F32, rows, cols), tmp = buf("tmp", F32, rows, cols);
        java.util.function.LongFunction<PrimFunc> program = written -> {
            Var r = new Var("r"), c = new Var("c"), r2 = new Var("r2"), c2 = new Var("c2");
            // tmp[r, c] = 2 a[r, c] for the first `written` rows; out[r, c] = tmp[r, c] + tmp[rows - 1 - r, c]
            return new PrimFunc(
                    "write" + written,
                    List.of(a, out),
                    new Allocate(
                            tmp,
                            Seq.of(
                                    loop(
                                            r,
                                            written,
                                            ForKind.SERIAL,
                                            loop(
                                                    c,
                                                    cols,
                                                    ForKind.VECTORIZED,
                                                    store(tmp, load(a, r, c).mul(2.0), r, c))),
                                    loop(
                                            r2,
                                            rows,
                                            ForKind.SERIAL,
                                            loop(
                                                    c2,
                                                    cols,
                                                    ForKind.SERIAL,
                                                    store(
                                                            out,
                                                            load(tmp, r2, c2)
                                                                    .add(
                                                                            load(
                                                                                    tmp,
                                                                                    i32(rows - 1)
                                                                                            .sub(r2),
                                                                                    c2)),
                                                            r2,
                                                            c2))))));
        };
        JvmKernel whole = JvmCheck.exact(program.apply(rows), 18);
        assertThat(whole.source()).doesNotContain("JvmOps.zero");
        // rows left unwritten read as zero: the allocation is cleared, on every call
        JvmKernel part = JvmCheck.exact(program.apply(rows - 2), 19);
        assertThat(part.source()).contains("JvmOps.zero");
        JvmCheck.exact(program.apply(rows - 2), 20);
    }

    @Test
    void smallParallelLoopsRunOnTheCallingThread() {
        Var r = new Var("r");
        Buffer a = buf("a", F32, 6), out = buf("out", F32, 6);
        PrimFunc f = new PrimFunc(
                "small",
                List.of(a, out),
                loop(r, 6, ForKind.PARALLEL, store(out, load(a, r).mul(load(a, r)), r)));
        JvmKernel k = JvmCheck.exact(f, 12);
        assertThat(k.notes()).anyMatch(s -> s.contains("runs on the calling thread"));
    }

    @Test
    void unrolledLoopsAreUnrolledWithinTheBudget() {
        Var r = new Var("r"), c = new Var("c");
        Buffer a = buf("a", DType.INT32, 4, 7), out = buf("out", DType.INT32, 4, 7);
        PrimFunc f = new PrimFunc(
                "unroll",
                List.of(a, out),
                loop(
                        r,
                        4,
                        ForKind.UNROLLED,
                        loop(c, 7, ForKind.UNROLLED, store(out, load(a, r, c).mul(r.add(c)), r, c))));
        JvmKernel k = JvmCheck.exact(f, 13);
        assertThat(k.notes()).isEmpty();
        assertThat(k.source()).doesNotContain("IF_ICMPLT"); // no loop left

        Var big = new Var("big");
        Buffer x = buf("x", F32, 5000), y = buf("y", F32, 5000);
        PrimFunc g = new PrimFunc(
                "unrollBig",
                List.of(x, y),
                loop(big, 5000, ForKind.UNROLLED, store(y, load(x, big).add(1.0), big)));
        assertThat(JvmCheck.exact(g, 14).notes()).anyMatch(s -> s.contains("stays a loop"));
    }

    @Test
    void largeProgramsAreSplitIntoMethodsHotSpotCompiles() {
        Var i = new Var("i");
        Buffer a = buf("a", F32, 16), out = buf("out", F32, 60, 16);
        List<dev.kiln.tir.Stmt> stages = new java.util.ArrayList<>();
        for (int s = 0; s < 60; s++) {
            Expr e = load(a, i);
            for (int d = 0; d < 6; d++) e = e.mul(e).add((double) s);
            stages.add(loop(i, 16, ForKind.SERIAL, store(out, e, i32(s), i)));
        }
        JvmKernel k = JvmCheck.exact(new PrimFunc("big", List.of(a, out), Seq.of(stages)), 15);
        assertThat(k.source()).contains("part$");
        assertThat(k.notes()).noneMatch(s -> s.contains("runs interpreted"));
    }

    @Test
    void threadBoundLoopsAreRejected() {
        Var t = new Var("t");
        Buffer a = buf("a", F32, 32);
        PrimFunc f = new PrimFunc(
                "gpu",
                List.of(a),
                new For(
                        t,
                        i32(0),
                        i32(32),
                        ForKind.THREAD_BOUND,
                        ThreadAxis.THREAD_X,
                        store(a, load(a, t).add(1.0), t)));
        assertThatThrownBy(() -> JvmCheck.BACKEND.compile(f, JvmCheck.TARGET))
                .isInstanceOf(KilnException.class)
                .hasMessageContaining("loop 't' is bound to threadIdx.x")
                .hasMessageContaining("CUDA");
    }

    @Test
    void divisionByZeroNamesTheExpressionEvenInsideAParallelLoop() {
        Var r = new Var("r"), c = new Var("c");
        Buffer a = buf("a", DType.INT32, 128, 128), out = buf("out", DType.INT32, 128, 128);
        PrimFunc f = new PrimFunc(
                "divz",
                List.of(a, out),
                loop(
                        r,
                        128,
                        ForKind.PARALLEL,
                        loop(c, 128, ForKind.SERIAL, store(out, i32(100).floordiv(load(a, r, c)), r, c))));
        JvmKernel k = JvmCheck.BACKEND.compile(f, JvmCheck.TARGET);
        try (NDArray x = NDArray.allocate(DType.INT32, 128, 128);
                NDArray y = NDArray.allocate(DType.INT32, 128, 128)) {
            for (int p = 0; p < 128 * 128; p++) x.setLongFlat(p == 9000 ? 0 : 3, p);
            assertThatThrownBy(() -> k.call(x, y))
                    .isInstanceOf(KilnException.class)
                    .hasMessageContaining("integer division by zero in floordiv(100, a[r, c]) in function 'divz'");
        }
    }
}
