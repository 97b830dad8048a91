package dev.kiln.lower;

import static dev.kiln.lower.GpuIr.bind;
import static dev.kiln.lower.GpuIr.buf;
import static dev.kiln.lower.GpuIr.c;
import static dev.kiln.lower.GpuIr.func;
import static dev.kiln.lower.GpuIr.load;
import static dev.kiln.lower.GpuIr.serial;
import static dev.kiln.lower.GpuIr.store;
import static dev.kiln.lower.GpuIr.v;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.kiln.fixtures.GpuSchedules;
import dev.kiln.ir.Buffer;
import dev.kiln.ir.DType;
import dev.kiln.ir.IntImm;
import dev.kiln.ir.KilnException;
import dev.kiln.ir.MemoryScope;
import dev.kiln.ir.Var;
import dev.kiln.schedule.ScheduleBuilder;
import dev.kiln.schedule.ScheduleBuilder.StageRef;
import dev.kiln.te.ComputeDAG;
import dev.kiln.te.Te;
import dev.kiln.te.Tensor;
import dev.kiln.tir.Allocate;
import dev.kiln.tir.IfThenElse;
import dev.kiln.tir.PrimFunc;
import dev.kiln.tir.Seq;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Placement of shared, local and global buffers in GPU programs, and the shared-memory limit. */
class PlanMemoryScopesTest {
    private static final GpuLimits H200 = GpuLimits.h200();

    private static String error(PrimFunc f, GpuLimits limits) {
        return assertThrows(KilnException.class, () -> PlanMemoryScopes.apply(f, limits))
                .getMessage();
    }

    private static PrimFunc lower(ScheduleBuilder s) {
        return Lowering.lower("f", s.build(), Lowering.Options.defaults());
    }

    /**
     * blockIdx b (2) { threadIdx t (8) { for k (2) { allocate S shared; threadIdx u (8) { S[u] = A[b, k*8 + u] };
     * C[b, t] += S[7 - t] } } }: the fetch is the same for every thread.
     */
    private static PrimFunc fetchInsideTheThreadLoop() {
        Buffer a = buf("A", MemoryScope.GLOBAL, 2, 16),
                s = buf("S", MemoryScope.SHARED, 8),
                out = buf("C", MemoryScope.GLOBAL, 2, 8);
        Var b = v("b"), t = v("t"), k = v("k"), u = v("u");
        return func(
                bind(
                        "blockIdx.x",
                        b,
                        2,
                        bind(
                                "threadIdx.x",
                                t,
                                8,
                                serial(
                                        k,
                                        2,
                                        new Allocate(
                                                s,
                                                Seq.of(
                                                        bind(
                                                                "threadIdx.x",
                                                                u,
                                                                8,
                                                                store(
                                                                        s,
                                                                        load(
                                                                                a,
                                                                                b,
                                                                                k.mul(8)
                                                                                        .add(u)),
                                                                        u)),
                                                        store(
                                                                out,
                                                                load(out, b, t).add(load(s, c(7).sub(t))),
                                                                b,
                                                                t)))))),
                a,
                out);
    }

    @Test
    void sharedAllocationMovesOutOfTheThreadLoops() {
        PrimFunc f = PlanMemoryScopes.apply(fetchInsideTheThreadLoop(), H200);
        assertEquals("""
                func f(A: float32[2, 16], C: float32[2, 8]) {
                  for[blockIdx.x] b in 0..2 {
                    allocate S: float32[8] shared
                    for[threadIdx.x] t in 0..8 {
                      for k in 0..2 {
                        for[threadIdx.x] u in 0..8 {
                          S[u] = A[b, ((k * 8) + u)]
                        }
                        C[b, t] = (C[b, t] + S[(7 - t)])
                      }
                    }
                  }
                }
                """, f.toString());
        assertSame(f, PlanMemoryScopes.apply(f, H200), "a planned program is left as it is");
    }

    @Test
    void sharedBufferFilledDifferentlyByEachThreadIsRefused() {
        Buffer a = buf("A", MemoryScope.GLOBAL, 8),
                s = buf("S", MemoryScope.SHARED, 1),
                out = buf("C", MemoryScope.GLOBAL, 8);
        Var t = v("t");
        PrimFunc f = func(
                bind(
                        "blockIdx.x",
                        v("b"),
                        1,
                        bind(
                                "threadIdx.x",
                                t,
                                8,
                                new Allocate(s, Seq.of(store(s, load(a, t), c(0)), store(out, load(s, c(0)), t))))),
                a,
                out);
        assertEquals(
                "function 'f': shared buffer 'S' would hold different data for each thread: its store depends on loop"
                        + " 't' bound to threadIdx.x, which encloses its allocation, so the threads of a block would "
                        + "overwrite each"
                        + " other's data; compute the stage outside the threadIdx loops or cache it in local memory",
                error(f, H200));
    }

    @Test
    void sharedStoreUnderAConditionOnTheThreadIsRefused() {
        Buffer a = buf("A", MemoryScope.GLOBAL, 8),
                s = buf("S", MemoryScope.SHARED, 8),
                out = buf("C", MemoryScope.GLOBAL, 8);
        Var t = v("t"), u = v("u");
        PrimFunc f = func(
                bind(
                        "blockIdx.x",
                        v("b"),
                        1,
                        bind(
                                "threadIdx.x",
                                t,
                                8,
                                new Allocate(
                                        s,
                                        Seq.of(
                                                bind(
                                                        "threadIdx.x",
                                                        u,
                                                        8,
                                                        IfThenElse.of(t.lt(4), store(s, load(a, u), u))),
                                                store(out, load(s, c(7).sub(t)), t))))),
                a,
                out);
        assertEquals(
                "function 'f': shared buffer 'S' would hold different data for each thread: its store depends on loop"
                        + " 't' bound to threadIdx.x, which encloses its allocation, so the threads of a block would "
                        + "overwrite each"
                        + " other's data; compute the stage outside the threadIdx loops or cache it in local memory",
                error(f, H200));
    }

    @Test
    void sharedBufferInAKernelWithoutBlockLoop() {
        Buffer a = buf("A", MemoryScope.GLOBAL, 8),
                s = buf("S", MemoryScope.SHARED, 8),
                out = buf("C", MemoryScope.GLOBAL, 8);
        Var t = v("t"), u = v("u");
        PrimFunc f = func(
                bind(
                        "threadIdx.x",
                        t,
                        8,
                        new Allocate(
                                s,
                                Seq.of(
                                        bind("threadIdx.x", u, 8, store(s, load(a, u), u)),
                                        store(out, load(s, c(7).sub(t)), t)))),
                a,
                out);
        assertEquals(
                "function 'f': shared buffer 'S' is in kernel 't' (threadIdx.x), which has no blockIdx loop around its"
                        + " threadIdx.x loop to allocate it in; bind an outer loop to blockIdx.x (extent 1 is fine)",
                error(f, H200));
    }

    private static ScheduleBuilder matmulBoundBy4x4() {
        ScheduleBuilder s = ScheduleBuilder.on(GpuSchedules.matmul(8, 8, 4));
        StageRef C = s.stage("C");
        C.split("i", 4);
        C.split("j", 4);
        C.reorder("i.0", "j.0", "i.1", "j.1", "k");
        C.bind(C.fuse("i.0", "j.0"), "blockIdx.x");
        C.bind(C.fuse("i.1", "j.1"), "threadIdx.x");
        return s;
    }

    @Test
    void sharedBufferOutsideEveryKernel() {
        ScheduleBuilder s = matmulBoundBy4x4();
        s.stage("A").cacheRead("shared", s.stage("C"));
        assertEquals(
                "function 'f': shared buffer 'A.shared' is allocated outside every kernel; compute it at a loop "
                        + "inside a" + " kernel",
                error(lower(s), H200));
    }

    @Test
    void localBufferOutsideTheThreadLoops() {
        ScheduleBuilder s = ScheduleBuilder.on(GpuSchedules.matmul(8, 8, 4));
        StageRef C = s.stage("C");
        StageRef local = C.cacheWrite("local");
        C.split("i", 4);
        C.bind("i.0", "blockIdx.x").bind("i.1", "threadIdx.x");
        local.computeAt(C, "i.0");
        assertEquals(
                "function 'f': local buffer 'C.local' is allocated outside the threadIdx loops of kernel 'i.0'"
                        + " (blockIdx.x), but each thread has its own local memory; compute it at a loop inside the "
                        + "threadIdx loop",
                error(lower(s), H200));
    }

    @Test
    void globalBufferInsideAKernel() {
        Tensor a = Te.placeholder("A", DType.FLOAT32, 16);
        Tensor b = Te.compute("B", Te.shape(16), i -> a.at(i).mul(2.0));
        ScheduleBuilder s = ScheduleBuilder.on(
                ComputeDAG.of(Te.compute("C", Te.shape(16), i -> b.at(i).add(1.0))));
        StageRef C = s.stage("C");
        C.split("i", 4);
        C.bind("i.0", "blockIdx.x").bind("i.1", "threadIdx.x");
        s.stage("B").computeAt(C, "i.1");
        assertEquals(
                "function 'f': global buffer 'B' is allocated inside kernel 'i.0' (blockIdx.x); compute it at root"
                        + " (in its own kernel), inline it, or cache it in shared or local memory",
                error(lower(s), H200));
    }

    private static PrimFunc gpuMatmul() {
        return Lowering.lower(
                "f",
                GpuSchedules.multiLevelTiling(
                        GpuSchedules.matmul(16, 24, 12),
                        "C",
                        List.of("i", "j"),
                        List.of("k"),
                        List.of("A", "B"),
                        new GpuSchedules.Tiles(new int[][] {{1, 2, 2, 1}, {2, 2, 1, 2}}, new int[][] {{2, 2}})),
                Lowering.Options.defaults());
    }

    @Test
    void sharedMemoryLimit() {
        // A.shared is 4 x 4 floats, B.shared 4 x 8.
        assertEquals(
                "function 'f': kernel 'i.0@j.0@' (blockIdx.x) needs 192 bytes of shared memory per block (A.shared 64,"
                        + " B.shared 128), more than the limit 191",
                error(gpuMatmul(), new GpuLimits(1024, 191, 32, 8)));
        PlanMemoryScopes.apply(gpuMatmul(), new GpuLimits(1024, 192, 32, 8));
    }

    @Test
    void paddedStridesCountInTheSharedMemorySize() {
        // Rows of 8 floats stored 9 apart: the last element is at 3 * 9 + 7 = 34, so 35 floats.
        Buffer s = new Buffer(
                "S",
                DType.FLOAT32,
                List.of(IntImm.i32(4), IntImm.i32(8)),
                List.of(IntImm.i32(9), IntImm.i32(1)),
                MemoryScope.SHARED);
        assertEquals(140, PlanMemoryScopes.bytes(s));
        Buffer out = buf("C", MemoryScope.GLOBAL, 8);
        Var t = v("t");
        PrimFunc f = func(
                bind(
                        "blockIdx.x",
                        v("b"),
                        1,
                        new Allocate(
                                s,
                                bind(
                                        "threadIdx.x",
                                        t,
                                        8,
                                        store(s, load(out, t), c(0), t),
                                        store(out, load(s, c(0), c(7).sub(t)), t)))),
                out);
        assertEquals(
                "function 'f': kernel 'b' (blockIdx.x) needs 140 bytes of shared memory per block (S 140), more than"
                        + " the limit 139",
                error(f, new GpuLimits(1024, 139, 32, 8)));
    }
}
