package dev.kiln.bench;

import dev.kiln.autoschedule.tune.AutoSchedule;
import dev.kiln.autoschedule.tune.TuneOptions;
import dev.kiln.autoschedule.tune.TuneResult;
import dev.kiln.ir.DType;
import dev.kiln.ir.KilnException;
import dev.kiln.lower.Lowering;
import dev.kiln.nn.Conv;
import dev.kiln.runtime.NDArray;
import dev.kiln.samples.MatmulSchedules;
import dev.kiln.schedule.Schedule;
import dev.kiln.schedule.ScheduleBuilder;
import dev.kiln.target.Backend;
import dev.kiln.target.CompiledKernel;
import dev.kiln.target.CpuTarget;
import dev.kiln.target.Target;
import dev.kiln.te.ComputeDAG;
import dev.kiln.te.Te;
import dev.kiln.te.Tensor;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
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
 * The pure-JVM backend (ASM + Vector API) and the LLVM backend on the same schedules, side by
 * side: GEMM 1024 with the hand-written tiled schedule, and the ResNet conv2d layer (NHWC
 * 56x56x64 -> 64, 3x3, pad 1) with padding inlined, register-tiled as {@link VectorConv} is (4 output
 * pixels x 4 vectors of channels accumulated while the reduction runs outside, rows parallel;
 * {@code conv2d-naive}: the older schedule with 1 pixel x 4 vectors).
 * Both backends compile with exact floating-point semantics (no FMA contraction) so they run the
 * same arithmetic. In the same run: the strong plain-Java baselines ({@code vector-api}:
 * {@link VectorGemm}, {@link VectorConv}, on a fork/join pool of the target's cores), and for GEMM
 * a program tuned on the JVM backend ({@code jvm-tuned}: the best record for {@code Target.jvm()}
 * in {@code -Dkiln.bench.jvmLog} (default kiln-bench-jvm-tuning.jsonl); when the log has fewer
 * than {@code -Dkiln.bench.jvmTrials} (default 64) trials for it, setup tunes it first, untimed).
 * Goals of issue 19: jvm at least 0.8x llvm and 1.0x vector-api; jvm-tuned at least 1.0x vector-api.
 * {@code jvm-fma} and {@code jvm-tuned-fma} (not run by default: {@code -p backend=...}) compile the same programs
 * for a fast-math JVM target, where the generator fuses {@code a * b + c} into one FMA as {@link VectorGemm} does.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(
        value = 1,
        jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "--add-modules=jdk.incubator.vector"})
public class BackendsBench {
    @Param({"gemm1024", "conv2d", "conv2d-naive"})
    public String workload;

    @Param({"llvm", "jvm", "vector-api", "jvm-tuned"})
    public String backend;

    /**
     * Rows of the hand GEMM schedule's tile ({@link MatmulSchedules.Tiles}: tiles of this many rows x 256 columns,
     * 4 x 64 register blocks, k in steps of 256; B's 256 x 256 block is packed once per tile and step of k, so taller
     * tiles pack it less often). 32 is {@link MatmulSchedules.Tiles#avx512()}.
     */
    @Param({"32"})
    public int gemmTileRows;

    private CompiledKernel kernel;
    private NDArray[] args;
    private ForkJoinPool pool;
    private float[] x, y, z, packed;

    @Setup
    public void setup() {
        Schedule s = workload.equals("gemm1024")
                ? MatmulSchedules.tiled(
                        MatmulBench.matmul(1024), new MatmulSchedules.Tiles(gemmTileRows, 256, 4, 64, 256))
                : workload.equals("conv2d-naive") ? conv2dNaiveSchedule() : conv2dSchedule();
        if (backend.equals("vector-api")) {
            pool = new ForkJoinPool(Target.cpu().cores());
            boolean gemm = workload.equals("gemm1024");
            x = NDArray.random(DType.FLOAT32, 1, gemm ? 1024 * 1024 : 56 * 56 * 64)
                    .toFloatArray();
            y = NDArray.random(DType.FLOAT32, 2, gemm ? 1024 * 1024 : 3 * 3 * 64 * 64)
                    .toFloatArray();
            z = new float[gemm ? 1024 * 1024 : 56 * 56 * 64];
            packed = new float[gemm ? 1024 * 1024 : 0];
            return;
        }
        if (backend.startsWith("jvm-tuned")) {
            if (!workload.equals("gemm1024")) {
                throw new KilnException("jvm-tuned is measured on gemm1024 only (run with -p workload=gemm1024 or "
                        + "leave it out for conv2d), not on '" + workload + "'");
            }
            s = tunedOnJvm(s.dag());
        }
        if (!List.of("llvm", "jvm", "jvm-tuned", "jvm-fma", "jvm-tuned-fma").contains(backend)) {
            throw new KilnException("BackendsBench: unknown backend '" + backend
                    + "' (llvm, jvm, vector-api, jvm-tuned, jvm-fma, jvm-tuned-fma)");
        }
        CpuTarget target = backend.equals("llvm") ? Target.cpu() : Target.jvm().withFastMath(backend.endsWith("-fma"));
        kernel = Backend.forTarget(target).compile(Lowering.lower(workload.replace('-', '_'), s), target);
        List<NDArray> a = new ArrayList<>();
        int seed = 1;
        for (Tensor t : s.dag().arguments()) {
            a.add(
                    t.isPlaceholder()
                            ? NDArray.random(t.dtype(), seed++, t.shape().toArray())
                            : NDArray.allocate(t.dtype(), t.shape().toArray()));
        }
        args = a.toArray(NDArray[]::new);
    }

    /**
     * The ResNet conv's register-tiled schedule: 4 output pixels (the width split by 4) x all 64 output
     * channels (4 vectors of 16 floats) accumulate in 16 vectors while the reduction (rh, rw, rc) runs
     * outside the tile; the pixels are unrolled, the channels vectorized, and (n, h) rows run in
     * parallel. {@code VectorConv} keeps the same 16 accumulators.
     */
    static Schedule conv2dSchedule() {
        ScheduleBuilder b = conv2dBuilder();
        var conv = b.stage(b.state().dag().outputs().get(0));
        var loops = conv.loops();
        // n, h, w, co, then the reduction rh, rw, rc
        var w = conv.split(loops.get(2), 4);
        conv.reorder(
                loops.get(0), loops.get(1), w.get(0), loops.get(4), loops.get(5), loops.get(6), w.get(1), loops.get(3));
        conv.parallel(conv.fuse(loops.get(0), loops.get(1)));
        conv.unroll(w.get(1));
        conv.vectorize(loops.get(3));
        return b.build();
    }

    /** The schedule BackendsBench ran before: 1 pixel x 4 vectors of accumulators ({@code conv2d-naive}). */
    static Schedule conv2dNaiveSchedule() {
        ScheduleBuilder b = conv2dBuilder();
        var conv = b.stage(b.state().dag().outputs().get(0));
        var loops = conv.loops();
        // n, h, w, co, then the reduction rh, rw, rc: put the reduction outside the channel vector.
        conv.reorder(loops.get(0), loops.get(1), loops.get(2), loops.get(4), loops.get(5), loops.get(6), loops.get(3));
        conv.parallel(loops.get(1));
        conv.vectorize(loops.get(3));
        return b.build();
    }

    private static ScheduleBuilder conv2dBuilder() {
        Tensor data = Te.placeholder("data", DType.FLOAT32, 1, 56, 56, 64);
        Tensor weight = Te.placeholder("weight", DType.FLOAT32, 3, 3, 64, 64);
        ScheduleBuilder b = ScheduleBuilder.on(ComputeDAG.of(Conv.conv2dNhwc(data, weight, 1, 1)));
        b.stage("pad").computeInline();
        return b;
    }

    /** The best program for {@code dag} on the JVM target from the log, tuned first if the log has too few trials. */
    static Schedule tunedOnJvm(ComputeDAG dag) {
        Path log = Path.of(System.getProperty("kiln.bench.jvmLog", "kiln-bench-jvm-tuning.jsonl"));
        int trials = Integer.getInteger("kiln.bench.jvmTrials", 64);
        TuneOptions opts =
                TuneOptions.builder().trials(trials).seed(7).logFile(log).build();
        try (TuneResult r = AutoSchedule.tune(dag, Target.jvm(), opts)) {
            System.out.println("# jvm-tuned: " + r.summary());
            return r.schedule();
        } catch (Exception e) {
            throw new KilnException(
                    "jvm-tuned: tuning GEMM 1024 on the JVM target with the log " + log + " failed: " + e.getMessage(),
                    e);
        }
    }

    @Benchmark
    public void run() {
        switch (backend) {
            case "vector-api" -> {
                if (workload.equals("gemm1024")) VectorGemm.gemm(x, y, z, 1024, 1024, 1024, packed, pool);
                else VectorConv.conv2d(x, y, z, RESNET_CONV, pool);
            }
            default -> kernel.call(args);
        }
    }

    /** The conv of {@link #conv2dSchedule()} as {@link VectorConv} takes it. */
    static final VectorConv.Shape RESNET_CONV = new VectorConv.Shape(1, 56, 56, 64, 64, 3, 3, 1);

    @TearDown
    public void tearDown() throws Exception {
        if (kernel != null) kernel.close();
        if (args != null) for (NDArray a : args) a.close();
        if (pool != null) pool.shutdown();
    }
}
