package dev.kiln.lower;

import static dev.kiln.lower.GpuIr.bind;
import static dev.kiln.lower.GpuIr.buf;
import static dev.kiln.lower.GpuIr.c;
import static dev.kiln.lower.GpuIr.func;
import static dev.kiln.lower.GpuIr.load;
import static dev.kiln.lower.GpuIr.loop;
import static dev.kiln.lower.GpuIr.serial;
import static dev.kiln.lower.GpuIr.store;
import static dev.kiln.lower.GpuIr.v;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.kiln.fixtures.GpuSchedules;
import dev.kiln.ir.Buffer;
import dev.kiln.ir.DType;
import dev.kiln.ir.FloatImm;
import dev.kiln.ir.IterVar;
import dev.kiln.ir.KilnException;
import dev.kiln.ir.MemoryScope;
import dev.kiln.ir.Var;
import dev.kiln.schedule.Schedule;
import dev.kiln.schedule.ScheduleBuilder;
import dev.kiln.schedule.ScheduleBuilder.StageRef;
import dev.kiln.te.ComputeDAG;
import dev.kiln.te.Te;
import dev.kiln.te.Tensor;
import dev.kiln.tir.Allocate;
import dev.kiln.tir.Barrier;
import dev.kiln.tir.For;
import dev.kiln.tir.ForKind;
import dev.kiln.tir.IfThenElse;
import dev.kiln.tir.PrimFunc;
import dev.kiln.tir.Stmt;
import dev.kiln.tir.ThreadAxis;
import java.util.List;
import java.util.function.Function;
import org.junit.jupiter.api.Test;

/** One test per rule of {@link VerifyThreadBindings}: the message names the loop or buffer and the rule. */
class VerifyThreadBindingsTest {
    private static final GpuLimits H200 = GpuLimits.h200();

    private static PrimFunc lower(Schedule s) {
        return Lowering.lower("f", s, Lowering.Options.defaults());
    }

    private static String error(PrimFunc f, GpuLimits limits) {
        return assertThrows(KilnException.class, () -> VerifyThreadBindings.apply(f, limits))
                .getMessage();
    }

    private static void assertMessage(String expected, PrimFunc f) {
        assertEquals("function 'f': " + expected, error(f, H200));
    }

    private static ScheduleBuilder matmul() {
        return ScheduleBuilder.on(GpuSchedules.matmul(8, 8, 4));
    }

    private static PrimFunc gpuMatmul() {
        return lower(GpuSchedules.multiLevelTiling(
                GpuSchedules.matmul(16, 24, 12),
                "C",
                List.of("i", "j"),
                List.of("k"),
                List.of("A", "B"),
                new GpuSchedules.Tiles(new int[][] {{1, 2, 2, 1}, {2, 2, 1, 2}}, new int[][] {{2, 2}})));
    }

    @Test
    void aValidProgramComesBackUnchanged() {
        PrimFunc f = gpuMatmul();
        assertSame(f, VerifyThreadBindings.apply(f, H200));
    }

    @Test
    void storeOutsideEveryKernel() {
        assertMessage(
                "the store to 'C' is outside every thread-bound loop, so no kernel would run it; bind its outer"
                        + " loops to blockIdx and threadIdx",
                lower(matmul().build()));
    }

    @Test
    void loopAroundAKernel() {
        ScheduleBuilder s = matmul();
        s.stage("C").bind("j", "blockIdx.x");
        assertMessage(
                "serial loop 'i' encloses loop 'j' bound to blockIdx.x, the start of a kernel; a loop around a kernel"
                        + " would run on the host: fuse it into the blockIdx loop or bind it",
                lower(s.build()));
    }

    @Test
    void parallelLoopAroundAThreadLoop() {
        ScheduleBuilder s = matmul();
        s.stage("C").parallel("i").bind("j", "threadIdx.x");
        assertMessage(
                "parallel loop 'i' encloses loop 'j' bound to threadIdx.x; a parallel or vectorized loop cannot"
                        + " contain thread-bound loops",
                lower(s.build()));
    }

    @Test
    void vectorizedLoopAroundAThreadLoop() {
        Buffer a = buf("A", MemoryScope.GLOBAL, 4, 8);
        Var i = v("i"), t = v("t");
        PrimFunc f = func(
                bind(
                        "blockIdx.x",
                        v("b"),
                        1,
                        loop(ForKind.VECTORIZED, i, 4, bind("threadIdx.x", t, 8, store(a, FloatImm.f32(1), i, t)))),
                a);
        assertMessage(
                "vectorized loop 'i' encloses loop 't' bound to threadIdx.x; a parallel or vectorized loop cannot"
                        + " contain thread-bound loops",
                f);
    }

    @Test
    void parallelLoopInsideAKernel() {
        ScheduleBuilder s = matmul();
        s.stage("C").bind("i", "blockIdx.x").parallel("j");
        assertMessage(
                "loop 'j' is parallel inside kernel 'i' (blockIdx.x); on a GPU bind it to a thread axis instead",
                lower(s.build()));
    }

    @Test
    void blockLoopInsideAThreadLoop() {
        ScheduleBuilder s = matmul();
        s.stage("C").bind("i", "threadIdx.x").bind("j", "blockIdx.x");
        assertMessage(
                "loop 'j' bound to blockIdx.x is inside loop 'i' bound to threadIdx.x; blockIdx loops must enclose"
                        + " the threadIdx and vthread loops",
                lower(s.build()));
    }

    @Test
    void threadLoopWithAVariableExtent() {
        Buffer a = buf("A", MemoryScope.GLOBAL, 64);
        Var n = v("n"), t = v("t");
        Stmt inner = new For(t, c(0), n, ForKind.THREAD_BOUND, ThreadAxis.THREAD_X, store(a, FloatImm.f32(1), t));
        PrimFunc f = func(bind("blockIdx.x", v("b"), 1, inner), a);
        assertMessage("loop 't' bound to threadIdx.x has extent n, not a constant", f);
    }

    @Test
    void blockAxisBoundTwice() {
        Buffer a = buf("A", MemoryScope.GLOBAL, 4, 4);
        Var b0 = v("b0"), b1 = v("b1");
        PrimFunc f = func(bind("blockIdx.x", b0, 4, bind("blockIdx.x", b1, 4, store(a, FloatImm.f32(1), b0, b1))), a);
        assertMessage(
                "loop 'b1' bound to blockIdx.x is inside loop 'b0' bound to the same axis; a block axis is bound once"
                        + " per kernel",
                f);
    }

    /** The Ansor matmul with one more A.shared fetched by {@code fetchThreads} threads (the block has 4). */
    private static ScheduleBuilder matmulWithFetch(String scope, int fetchThreads) {
        ScheduleBuilder s = ScheduleBuilder.on(GpuSchedules.matmul(16, 24, 12));
        GpuSchedules.tile(
                s,
                "C",
                List.of("i", "j"),
                List.of("k"),
                List.of("B"),
                new GpuSchedules.Tiles(new int[][] {{1, 2, 2, 1}, {2, 2, 1, 2}}, new int[][] {{2, 2}}));
        StageRef cache = s.stage("A").cacheRead(scope, s.stage("C.local"));
        cache.computeAt(s.stage("C.local"), "k.0");
        GpuSchedules.cooperativeFetch(cache, fetchThreads);
        return s;
    }

    @Test
    void nestedThreadLoopLongerThanTheBlock() {
        assertMessage(
                "loop 'ax0@ax1@.1' bound to threadIdx.x has extent 8, more than the enclosing loop 'i.2@j.2@' bound to"
                        + " threadIdx.x (4); inside it the loop means the same thread index, so it cannot be longer",
                lower(matmulWithFetch("shared", 8).build()));
    }

    @Test
    void nestedThreadLoopThatStoresToLocalMemory() {
        assertMessage(
                "loop 'ax0@ax1@.1' binds threadIdx.x again inside loop 'i.2@j.2@', where it is the same thread index:"
                        + " only a cooperative fetch into shared memory may do that, but it stores to local buffer "
                        + "'A.local'",
                lower(matmulWithFetch("local", 4).build()));
    }

    @Test
    void tooManyThreadsPerBlock() {
        assertEquals(
                "function 'f': kernel 'i.0@j.0@' (blockIdx.x) uses 4 threads per block (threadIdx.x 4), more than"
                        + " the limit 3",
                error(gpuMatmul(), new GpuLimits(3, 48 * 1024, 32, 8)));
    }

    @Test
    void moreBlocksOnYThanCudaAllows() {
        Buffer a = buf("A", MemoryScope.GLOBAL, 70000);
        Var y = v("y");
        PrimFunc f = func(bind("blockIdx.y", y, 70000, store(a, FloatImm.f32(1), y)), a);
        assertMessage(
                "kernel 'y' (blockIdx.y) launches 70000 on blockIdx.y, more than CUDA's limit 65535; fuse it into"
                        + " another axis or split it",
                f);
    }

    @Test
    void vthreadTooLong() {
        assertEquals(
                "function 'f': vthread loop 'i.1@j.1@' has extent 2, more than the limit 1",
                error(gpuMatmul(), new GpuLimits(1024, 48 * 1024, 32, 1)));
    }

    @Test
    void storeOutsideTheThreadLoopsOfItsKernel() {
        Buffer a = buf("A", MemoryScope.GLOBAL, 4, 8),
                s = buf("S", MemoryScope.SHARED, 8),
                out = buf("C", MemoryScope.GLOBAL, 4);
        Var b = v("b"), t = v("t");
        PrimFunc f = func(
                bind(
                        "blockIdx.x",
                        b,
                        4,
                        bind("threadIdx.x", t, 8, store(s, load(a, b, t), t)),
                        store(out, load(s, c(0)), b)),
                a,
                out);
        assertMessage(
                "the store to global buffer 'C' is outside every loop bound to threadIdx.x in kernel 'b' (blockIdx.x),"
                        + " which launches 8 of them, so each of them would run it; compute it inside a loop bound "
                        + "to threadIdx.x"
                        + " (a reduction loop bound to threads would need a cross-thread reduction, which Kiln does "
                        + "not lower yet)",
                f);
    }

    @Test
    void reductionLoopBoundToThreads() {
        Tensor a = Te.placeholder("A", DType.FLOAT32, 8, 16);
        IterVar k = Te.reduceAxis(16, "k");
        ComputeDAG dag = ComputeDAG.of(Te.compute("B", Te.shape(8), i -> Te.sum(k, a.at(i, k))));
        ScheduleBuilder s = ScheduleBuilder.on(dag);
        StageRef b = s.stage("B");
        b.split("i", 4);
        b.split("k", 4);
        b.reorder("i.0", "i.1", "k.0", "k.1");
        b.bind("i.0", "blockIdx.x").bind("i.1", "threadIdx.x").bind("k.1", "threadIdx.y");
        // The initialisation B[i] = 0 runs outside the threadIdx.y loop of the reduction.
        assertMessage(
                "the store to global buffer 'B' is outside every loop bound to threadIdx.y in kernel 'i.0'"
                        + " (blockIdx.x), which launches 4 of them, so each of them would run it; compute it inside "
                        + "a loop bound to"
                        + " threadIdx.y (a reduction loop bound to threads would need a cross-thread reduction, "
                        + "which Kiln does not"
                        + " lower yet)",
                lower(s.build()));
    }

    @Test
    void storeThatDoesNotDependOnItsThreadLoop() {
        Buffer a = buf("A", MemoryScope.GLOBAL, 4, 8), out = buf("C", MemoryScope.GLOBAL, 4);
        Var b = v("b"), t = v("t");
        PrimFunc f = func(
                bind(
                        "blockIdx.x",
                        b,
                        4,
                        bind("threadIdx.x", t, 8, store(out, load(out, b).add(load(a, b, t)), b))),
                a,
                out);
        assertMessage(
                "the store to global buffer 'C' inside loop 't' bound to threadIdx.x does not depend on it, so all"
                        + " its threads would write the same element; a reduction loop bound to threads needs a "
                        + "cross-thread"
                        + " reduction, which Kiln does not lower yet (rfactor it, or bind spatial loops only)",
                f);
    }

    // ---- barriers --------------------------------------------------------------------------

    /** blockIdx b (2) { threadIdx t (8) { S[t] = A[b, t]; <barrierSite>; C[b, t] = S[7 - t] } } */
    private static PrimFunc withBarrier(Function<Var, Stmt> barrierSite) {
        Buffer a = buf("A", MemoryScope.GLOBAL, 2, 8),
                s = buf("S", MemoryScope.SHARED, 8),
                out = buf("C", MemoryScope.GLOBAL, 2, 8);
        Var b = v("b"), t = v("t");
        return func(
                bind(
                        "blockIdx.x",
                        b,
                        2,
                        new Allocate(
                                s,
                                bind(
                                        "threadIdx.x",
                                        t,
                                        8,
                                        store(s, load(a, b, t), t),
                                        barrierSite.apply(t),
                                        store(out, load(s, c(7).sub(t)), b, t)))),
                a,
                out);
    }

    @Test
    void barrierWhereAllThreadsArriveIsValid() {
        PrimFunc f = withBarrier(t -> new Barrier());
        assertSame(f, VerifyThreadBindings.apply(f, H200));
    }

    @Test
    void barrierUnderACondition() {
        assertMessage(
                "a barrier is under the condition (t < 4): not every thread of the block would reach it",
                withBarrier(t -> IfThenElse.of(t.lt(4), new Barrier())));
    }

    @Test
    void barrierInsideANestedBinding() {
        assertMessage(
                "a barrier is inside loop 'u', which binds threadIdx.x again and runs once per thread: not every"
                        + " thread of the block would reach it",
                withBarrier(t -> bind("threadIdx.x", v("u"), 8, new Barrier())));
    }

    @Test
    void barrierInsideALoopOnPartOfTheThreads() {
        Buffer a = buf("A", MemoryScope.GLOBAL, 8);
        Var t = v("t"), u = v("u");
        PrimFunc f = func(
                bind(
                        "blockIdx.x",
                        v("b"),
                        1,
                        bind("threadIdx.x", t, 8, store(a, FloatImm.f32(1), t)),
                        bind("threadIdx.x", u, 4, new Barrier())),
                a);
        assertMessage(
                "a barrier is inside loop 'u' bound to threadIdx.x with extent 4 while kernel 'b' (blockIdx.x) launches"
                        + " 8 on that axis: not every thread of the block would reach it",
                f);
    }

    @Test
    void barrierInsideAVectorizedLoop() {
        assertMessage(
                "a barrier is inside vectorized loop 'w': not every thread of the block would reach it",
                withBarrier(t -> loop(ForKind.VECTORIZED, v("w"), 4, new Barrier())));
    }

    @Test
    void barrierOutsideEveryKernel() {
        assertMessage("a barrier is outside every kernel", func(serial(v("i"), 2, new Barrier())));
    }
}
