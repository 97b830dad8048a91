package dev.kiln.jit;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kiln.ir.DType;
import dev.kiln.lower.LowerDefault;
import dev.kiln.te.ComputeDAG;
import dev.kiln.te.Te;
import dev.kiln.te.Tensor;
import dev.kiln.tir.ForKind;
import dev.kiln.tir.PrimFunc;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;

/**
 * Thread safety of concurrent LLVM compiles: {@link OrcJit#add} generates machine code outside the
 * JIT's lock, so many threads parse, optimise and generate code at once. Six threads, released
 * together, each compile distinct programs (cache misses: elementwise, default-lowered matmul and
 * vectorized parallel matmul of sizes no other thread uses) and run them; every parameter is
 * compared with the interpreter on seeded random inputs (float sums: relative 1e-5, absolute 1e-5).
 */
class ConcurrentCompileTest {
    private static final int THREADS = 6;
    private static final int PER_THREAD = 6;

    private static PrimFunc addMul(int n) {
        Tensor a = Te.placeholder("A", DType.FLOAT32, n), b = Te.placeholder("B", DType.FLOAT32, n);
        return LowerDefault.lower("addmul", ComputeDAG.of(Te.compute("C", Te.shape(n), i -> a.at(i)
                .add(b.at(i))
                .mul(a.at(i)))));
    }

    /** The {@code j}-th program of thread {@code t}: the kind cycles, the size is unique to (t, j). */
    private static PrimFunc program(int t, int j, boolean inLock) {
        int id = t * PER_THREAD + j + (inLock ? THREADS * PER_THREAD : 0);
        return switch (j % 3) {
            case 0 -> addMul(1000 + id);
            case 1 -> CompileLatencyBenchmark.mm(4 + id);
            default -> ParallelRuntimeBenchmark.matmul(5 + id, ForKind.PARALLEL);
        };
    }

    private static void runAll(boolean codegenInLock) throws Exception {
        boolean before = OrcJit.codegenInLock;
        OrcJit.codegenInLock = codegenInLock;
        ExecutorService pool = Executors.newFixedThreadPool(THREADS);
        try {
            CyclicBarrier start = new CyclicBarrier(THREADS);
            List<Future<Integer>> done = new ArrayList<>();
            for (int t = 0; t < THREADS; t++) {
                int tt = t;
                done.add(pool.submit(() -> {
                    start.await();
                    for (int j = 0; j < PER_THREAD; j++)
                        JitCheck.matches(
                                program(tt, j, codegenInLock), 31L * tt + j + (codegenInLock ? 7 : 0), 1e-5, 1e-5);
                    return PER_THREAD;
                }));
            }
            int checked = 0;
            for (Future<Integer> f : done) checked += f.get();
            assertThat(checked).isEqualTo(THREADS * PER_THREAD);
        } finally {
            pool.shutdownNow();
            OrcJit.codegenInLock = before;
        }
    }

    @Test
    void concurrentCompilesGenerateCorrectCode() throws Exception {
        runAll(false);
    }

    /** The fallback ({@code -Dkiln.jit.codegenInLock=true}): code generated at the link, one module at a time. */
    @Test
    void codegenInLockStillCorrect() throws Exception {
        runAll(true);
    }
}
