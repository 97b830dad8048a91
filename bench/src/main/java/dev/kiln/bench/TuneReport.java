package dev.kiln.bench;

import dev.kiln.autoschedule.measure.CallTimer;
import dev.kiln.autoschedule.tune.AutoSchedule;
import dev.kiln.autoschedule.tune.TuneOptions;
import dev.kiln.autoschedule.tune.TuneResult;
import dev.kiln.ir.DType;
import dev.kiln.lower.Lowering;
import dev.kiln.nn.Conv;
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
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.bytedeco.javacpp.FloatPointer;

/**
 * The auto-scheduler's benchmark (issue 5): tunes GEMM 1024 and the C2D layer 56x56x64 -> 64
 * (1x1, stride 1; ../shared/workloads/ansor-ops.tsv) for a number of trials, then times the best
 * program next to the hand-written schedule and OpenBLAS in the same process, each as a user
 * calls it ({@link CallTimer.Policy#kernel()}: a warm-up by time, then at least 20 calls and 1 s),
 * with the median and the p10-p90 spread of the calls.
 *
 * <pre>OPENBLAS_CORETYPE=SkylakeX ./kiln mvn -q -pl bench exec:java ... (see docs/PERFORMANCE.md)</pre>
 *
 * Arguments: {@code [trials] [log file]} (default 200, kiln-bench-tuning.jsonl; the log resumes).
 */
public final class TuneReport {
    private TuneReport() {}

    public static void main(String[] args) throws Exception {
        int trials = args.length > 0 ? Integer.parseInt(args[0]) : 200;
        Path log = Path.of(args.length > 1 ? args[1] : "kiln-bench-tuning.jsonl");
        CpuTarget target = ((CpuTarget) Target.cpu()).withFastMath(true);
        System.out.println("target: " + target);
        System.out.println("OpenBLAS kernel: " + OpenBlas.coreName() + " (OPENBLAS_CORETYPE="
                + System.getenv("OPENBLAS_CORETYPE") + ")");
        System.out.println("load average before: " + loadAverage());
        ComputeDAG gemm = MatmulBench.matmul(1024);
        Tensor data = Te.placeholder("data", DType.FLOAT32, 1, 56, 56, 64);
        Tensor weight = Te.placeholder("weight", DType.FLOAT32, 1, 1, 64, 64);
        ComputeDAG c2d = ComputeDAG.of(Conv.conv2dNhwc(data, weight, 1, 0));
        List<String> lines = new ArrayList<>();
        for (var w : List.of(new Object[] {"GEMM 1024", gemm}, new Object[] {"C2D 56x56x64->64 1x1", c2d})) {
            String name = (String) w[0];
            ComputeDAG dag = (ComputeDAG) w[1];
            TuneOptions opts =
                    TuneOptions.builder().trials(trials).seed(7).logFile(log).build();
            try (TuneResult r = AutoSchedule.tune(dag, target, opts)) {
                System.out.println(name + ": " + r.summary());
                CallTimer.Stats tunedStats = time(r.schedule(), target);
                double tuned = tunedStats.median();
                double flops = dag.flopCount();
                String unit = dag.rateUnit();
                lines.add(row(name, "tuned, " + r.trials() + " trials", tunedStats, flops, unit));
                if (dag == gemm) {
                    CallTimer.Stats handStats =
                            time(MatmulSchedules.tiled(dag, MatmulSchedules.Tiles.avx512()), target);
                    CallTimer.Stats blasStats = openBlas(1024, target.cores());
                    double hand = handStats.median(), blas = blasStats.median();
                    lines.add(row(name, "hand-written schedule", handStats, flops, unit));
                    lines.add(row(name, "OpenBLAS sgemm, " + target.cores() + " threads", blasStats, flops, unit));
                    lines.add(String.format(Locale.ROOT, "| %s | tuned / OpenBLAS | | | %.2fx |", name, blas / tuned));
                    lines.add(String.format(
                            Locale.ROOT, "| %s | tuned / hand-written | | | %.2fx |", name, hand / tuned));
                }
            }
        }
        System.out.println("load average after: " + loadAverage());
        System.out.println("| workload | variant | median | p10-p90 | rate |");
        System.out.println("|---|---|---|---|---|");
        lines.forEach(System.out::println);
    }

    /**
     * A table row: the median of the calls, their p10-p90 spread and the speed at the median, in
     * {@code unit} (GFLOP/s, or GOP/s for an integer computation: {@code ComputeDAG.rateUnit()}).
     */
    static String row(String workload, String variant, CallTimer.Stats t, double flops, String unit) {
        return String.format(
                Locale.ROOT,
                "| %s | %s | %.3f ms | %.3f-%.3f ms | %.1f %s |",
                workload,
                variant,
                t.median() * 1e3,
                t.p10() * 1e3,
                t.p90() * 1e3,
                flops / t.median() / 1e9,
                unit);
    }

    static CallTimer.Stats time(Schedule s, CpuTarget target) {
        try (CompiledKernel k = Backend.forTarget(target).compile(Lowering.lower("bench", s), target)) {
            List<NDArray> a = new ArrayList<>();
            int seed = 1;
            for (Tensor t : s.dag().arguments()) {
                a.add(
                        t.isPlaceholder()
                                ? NDArray.random(t.dtype(), seed++, t.shape().toArray())
                                : NDArray.allocate(t.dtype(), t.shape().toArray()));
            }
            NDArray[] argv = a.toArray(NDArray[]::new);
            CallTimer.Stats t = CallTimer.time(() -> k.call(argv), CallTimer.Policy.kernel());
            a.forEach(NDArray::close);
            return t;
        }
    }

    static CallTimer.Stats openBlas(int n, int threads) {
        OpenBlas.setThreads(threads);
        try (FloatPointer x = new FloatPointer((long) n * n);
                FloatPointer y = new FloatPointer((long) n * n);
                FloatPointer z = new FloatPointer((long) n * n)) {
            for (long i = 0; i < (long) n * n; i++) {
                x.put(i, (float) Math.sin(i));
                y.put(i, (float) Math.cos(i));
            }
            return CallTimer.time(() -> OpenBlas.sgemm(n, n, n, x, y, z), CallTimer.Policy.kernel());
        }
    }

    static String loadAverage() {
        try {
            return java.nio.file.Files.readString(Path.of("/proc/loadavg")).trim();
        } catch (java.io.IOException e) {
            return "unknown";
        }
    }
}
