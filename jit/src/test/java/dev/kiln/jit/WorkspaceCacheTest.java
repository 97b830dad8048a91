package dev.kiln.jit;

import static dev.kiln.jit.Funcs.buf;
import static dev.kiln.jit.Funcs.load;
import static dev.kiln.jit.Funcs.loop;
import static dev.kiln.jit.Funcs.store;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kiln.ir.Buffer;
import dev.kiln.ir.DType;
import dev.kiln.ir.Expr;
import dev.kiln.ir.FloatImm;
import dev.kiln.ir.KilnException;
import dev.kiln.ir.Var;
import dev.kiln.runtime.NDArray;
import dev.kiln.target.CacheEviction;
import dev.kiln.target.CpuTarget;
import dev.kiln.target.Target;
import dev.kiln.tir.Allocate;
import dev.kiln.tir.ForKind;
import dev.kiln.tir.PrimFunc;
import dev.kiln.tir.Seq;
import dev.kiln.tir.Stmt;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The workspace cache behind kernels' heap temporaries ({@code kiln_rt_alloc} in native-pool.ll): a
 * kernel called again reuses the blocks its last call gave back, so it takes no new block and no
 * page faults, whatever glibc's malloc heuristics would have done (MobileNet-V2's first depthwise
 * conv took 393 faults and 4 ms per call in a network, 0.1 ms in the tuner; docs/PERFORMANCE.md).
 * Faults are counted for the calling thread only ({@code getrusage(RUSAGE_THREAD)}).
 */
class WorkspaceCacheTest {
    private static final DType F32 = DType.FLOAT32;
    private static final int N = 640; // 640 x 640 float32 = 1.6 MB per temporary, far above the stack limit

    /** B = (2A + 1) * 2A through two temporaries alive together; {@code kind} is the kind of the outer loops. */
    private static PrimFunc twoTemporaries(ForKind kind) {
        Var i = new Var("i"), j = new Var("j");
        Buffer a = buf("A", F32, N, N), b = buf("B", F32, N, N);
        Buffer t1 = buf("T1", F32, N, N), t2 = buf("T2", F32, N, N);
        Expr two = FloatImm.f32(2), one = FloatImm.f32(1);
        Stmt body = Seq.of(
                loop(
                        i,
                        N,
                        kind,
                        loop(j, N, ForKind.VECTORIZED, store(t1, load(a, i, j).mul(two), i, j))),
                loop(
                        i,
                        N,
                        kind,
                        loop(j, N, ForKind.VECTORIZED, store(t2, load(t1, i, j).add(one), i, j))),
                loop(
                        i,
                        N,
                        kind,
                        loop(j, N, ForKind.VECTORIZED, store(b, load(t2, i, j).mul(load(t1, i, j)), i, j))));
        return new PrimFunc("temps_" + kind, List.of(a, b), new Allocate(t1, new Allocate(t2, body)));
    }

    private static void checkOutput(NDArray x, NDArray y) {
        for (long e = 0; e < (long) N * N; e += 997) { // in float32, as the kernel computes it
            float v = (float) x.getDoubleFlat(e);
            assertThat((float) y.getDoubleFlat(e)).as("element %d", e).isEqualTo((v * 2 + 1) * (v * 2));
        }
    }

    @Test
    void aKernelCalledAgainReusesItsTemporariesWithoutPageFaults() {
        CpuTarget target = JitCheck.TARGET;
        try (LlvmKernel k = JitCheck.BACKEND.compile(twoTemporaries(ForKind.SERIAL), target);
                NDArray x = NDArray.random(F32, 5, N, N);
                NDArray y = NDArray.allocate(F32, N, N)) {
            k.call(x, y); // the first call may take its blocks from the C heap
            checkOutput(x, y);
            long misses = LlvmBackend.workspaceMisses(target);
            int calls = 12;
            long f0 = threadMinorFaults();
            for (int c = 0; c < calls; c++) k.call(x, y);
            double faultsPerCall = (threadMinorFaults() - f0) / (double) calls;
            checkOutput(x, y);
            assertThat(LlvmBackend.workspaceMisses(target) - misses)
                    .as("blocks taken from the C heap by %d more calls", calls)
                    .isZero();
            // without the cache, glibc mapped the two temporaries afresh on every call here: ~400 faults each
            assertThat(faultsPerCall).as("page faults per call").isLessThan(10);
        }
    }

    @Test
    void aKernelNamesItsTemporariesAndTheTunersFlushEvictsTheirBlocks() {
        CpuTarget target = JitCheck.TARGET;
        long bytes = 4L * N * N;
        CacheEviction eviction = JitCheck.BACKEND.cacheEviction(target).orElseThrow();
        try (LlvmKernel k = JitCheck.BACKEND.compile(twoTemporaries(ForKind.SERIAL), target);
                LlvmKernel none = JitCheck.BACKEND.compile(noTemporaries(), target);
                NDArray x = NDArray.random(F32, 7, N, N);
                NDArray y = NDArray.allocate(F32, N, N)) {
            assertThat(k.heapTemporaries()).as("two temporaries of one size").containsExactly(bytes);
            assertThat(none.heapTemporaries()).isEmpty();
            k.call(x, y); // both blocks given back to the cache at the end of the call
            assertThat(eviction.evictTemporaries(bytes))
                    .as("blocks of %d bytes evicted", bytes)
                    .isGreaterThanOrEqualTo(2);
            assertThat(eviction.evictTemporaries(bytes + 64))
                    .as("no block of another size")
                    .isZero();
            long misses = LlvmBackend.workspaceMisses(target);
            y.fillRandom(3);
            k.call(x, y); // the evicted blocks are still the cache's: reused, and the result is right
            checkOutput(x, y);
            assertThat(LlvmBackend.workspaceMisses(target) - misses).isZero();
            assertThatThrownBy(() -> eviction.evictTemporaries(0))
                    .isInstanceOf(KilnException.class)
                    .hasMessageContaining("positive size");
        }
    }

    /** B = 2A with no temporary. */
    private static PrimFunc noTemporaries() {
        Var i = new Var("i"), j = new Var("j");
        Buffer a = buf("A", F32, N, N), b = buf("B", F32, N, N);
        return new PrimFunc(
                "no_temps",
                List.of(a, b),
                loop(
                        i,
                        N,
                        ForKind.SERIAL,
                        loop(j, N, ForKind.VECTORIZED, store(b, load(a, i, j).mul(FloatImm.f32(2)), i, j))));
    }

    @Test
    void parallelKernelsShareTheCacheSafely() {
        CpuTarget target = Target.cpu().withCores(2);
        try (LlvmKernel k = JitCheck.BACKEND.compile(twoTemporaries(ForKind.PARALLEL), target);
                LlvmKernel s = JitCheck.BACKEND.compile(twoTemporaries(ForKind.SERIAL), target);
                NDArray x = NDArray.random(F32, 6, N, N);
                NDArray y = NDArray.allocate(F32, N, N);
                NDArray z = NDArray.allocate(F32, N, N)) {
            // two Java threads call kernels with same-sized temporaries at once, each on its own output
            Thread other = Thread.ofPlatform().start(() -> {
                for (int c = 0; c < 20; c++) s.call(x, z);
            });
            for (int c = 0; c < 20; c++) k.call(x, y);
            try {
                other.join();
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            }
            checkOutput(x, y);
            checkOutput(x, z);
        }
    }

    @Test
    void temporariesOfParallelIterationsComeAndGoOnEveryThread() {
        // each of 64 parallel iterations fills its own 20 KiB temporary (above the stack limit) and reads it back
        int rows = 64, w = 5120;
        Var i = new Var("i"), j = new Var("j");
        Buffer a = buf("A", F32, rows, w), b = buf("B", F32, rows, w), t = buf("T", F32, w);
        Stmt body = Seq.of(
                loop(j, w, ForKind.VECTORIZED, store(t, load(a, i, j).mul(FloatImm.f32(3)), j)),
                loop(j, w, ForKind.VECTORIZED, store(b, load(t, j).add(load(a, i, j)), i, j)));
        PrimFunc fn = new PrimFunc("ptemps", List.of(a, b), loop(i, rows, ForKind.PARALLEL, new Allocate(t, body)));
        CpuTarget target = Target.cpu().withCores(2);
        try (LlvmKernel k = JitCheck.BACKEND.compile(fn, target);
                NDArray x = NDArray.random(F32, 8, rows, w);
                NDArray y = NDArray.allocate(F32, rows, w)) {
            assertThat(k.generatedIr()).contains("@kiln_rt_alloc(i64 20480)");
            for (int c = 0; c < 10; c++) {
                y.fillRandom(100 + c); // poisoned: every element must be written again
                k.call(x, y);
                for (long e = 0; e < (long) rows * w; e += 331) {
                    float v = (float) x.getDoubleFlat(e);
                    assertThat((float) y.getDoubleFlat(e))
                            .as("call %d, element %d", c, e)
                            .isEqualTo(v * 3 + v);
                }
            }
        }
    }

    /** Minor page faults of the calling thread so far ({@code getrusage(RUSAGE_THREAD)}, Linux x86-64). */
    private static long threadMinorFaults() {
        Linker l = Linker.nativeLinker();
        MethodHandle getrusage = l.downcallHandle(
                l.defaultLookup().find("getrusage").orElseThrow(),
                FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.ADDRESS));
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment ru = arena.allocate(144, 8); // struct rusage
            int rc = (int) getrusage.invokeExact(1, ru); // RUSAGE_THREAD
            assertThat(rc).as("getrusage").isZero();
            return ru.get(ValueLayout.JAVA_LONG, 64); // ru_minflt: after two timevals and four longs
        } catch (Throwable t) {
            throw new AssertionError("getrusage failed", t);
        }
    }
}
