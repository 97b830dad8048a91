package dev.kiln.bench;

import dev.kiln.ir.DType;
import dev.kiln.ir.IterVar;
import dev.kiln.lower.Lowering;
import dev.kiln.runtime.NDArray;
import dev.kiln.samples.MatmulSchedules;
import dev.kiln.samples.OpenBlas;
import dev.kiln.schedule.Schedule;
import dev.kiln.target.Backend;
import dev.kiln.target.CompiledKernel;
import dev.kiln.target.CpuTarget;
import dev.kiln.target.Target;
import dev.kiln.te.ComputeDAG;
import dev.kiln.te.Te;
import dev.kiln.te.Tensor;
import java.util.concurrent.TimeUnit;
import org.bytedeco.javacpp.FloatPointer;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * float32 matmul C = A x B, side by side in one run: Kiln's hand schedule
 * ({@link MatmulSchedules#tiled}) through the LLVM JIT, OpenBLAS sgemm (bytedeco, 2 threads; run
 * with OPENBLAS_CORETYPE=SkylakeX on AVX-512 machines, see PERFORMANCE.md), the packed,
 * register-blocked Vector API kernel ({@link VectorGemm}), and the naive Java loop. GFLOP/s = 2 n^3 / time.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(
        value = 1,
        jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "--add-modules=jdk.incubator.vector"})
public class MatmulBench {
    @Param({"1024"})
    public int n;

    @Param({"kiln-hand", "openblas", "vector-api", "naive-java"})
    public String impl;

    /** Threads for Kiln, OpenBLAS and the Vector API loop (the naive loop is single-threaded). */
    @Param({"1", "2"})
    public int threads;

    private java.util.concurrent.ForkJoinPool pool;

    private float[] a, b, c, packed;
    private NDArray na, nb, nc;
    private CompiledKernel kernel;
    private FloatPointer pa, pb, pc;

    @Setup(Level.Trial)
    public void setup() {
        na = NDArray.random(DType.FLOAT32, 1, n, n);
        nb = NDArray.random(DType.FLOAT32, 2, n, n);
        nc = NDArray.allocate(DType.FLOAT32, n, n);
        a = na.toFloatArray();
        b = nb.toFloatArray();
        c = new float[n * n];
        switch (impl) {
            case "kiln-hand" -> {
                Schedule s = MatmulSchedules.tiled(matmul(n), MatmulSchedules.Tiles.avx512());
                CpuTarget target = ((CpuTarget) Target.cpu()).withFastMath(true).withCores(threads);
                kernel = Backend.forTarget(target).compile(Lowering.lower("matmul", s), target);
            }
            case "openblas" -> {
                OpenBlas.setThreads(threads);
                System.out.println("# OpenBLAS kernel: " + OpenBlas.coreName() + " (OPENBLAS_CORETYPE="
                        + System.getenv("OPENBLAS_CORETYPE") + "), threads: " + threads);
                pa = new FloatPointer(a);
                pb = new FloatPointer(b);
                pc = new FloatPointer((long) n * n);
            }
            case "vector-api" -> {
                pool = new java.util.concurrent.ForkJoinPool(threads);
                packed = new float[n * n];
            }
            default -> {}
        }
    }

    static ComputeDAG matmul(int n) {
        Tensor x = Te.placeholder("A", DType.FLOAT32, n, n);
        Tensor y = Te.placeholder("B", DType.FLOAT32, n, n);
        IterVar k = Te.reduceAxis(n, "k");
        return ComputeDAG.of(
                Te.compute("C", Te.shape(n, n), (i, j) -> Te.sum(k, x.at(i, k).mul(y.at(k, j)))));
    }

    @Benchmark
    public Object run() {
        switch (impl) {
            case "kiln-hand" -> kernel.call(na, nb, nc);
            case "openblas" -> OpenBlas.sgemm(n, n, n, pa, pb, pc);
            case "vector-api" -> VectorGemm.gemm(a, b, c, n, n, n, packed, pool);
            case "naive-java" -> MatmulBaselines.naive(a, b, c, n);
            default -> throw new IllegalArgumentException(impl);
        }
        return c;
    }

    @TearDown(Level.Trial)
    public void tearDown() throws Exception {
        if (kernel != null) kernel.close();
        if (pool != null) pool.shutdown();
        na.close();
        nb.close();
        nc.close();
    }
}
