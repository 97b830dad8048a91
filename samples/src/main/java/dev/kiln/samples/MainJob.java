package dev.kiln.samples;

import dev.kiln.autoschedule.measure.CallTimer;
import dev.kiln.autoschedule.tune.AutoSchedule;
import dev.kiln.autoschedule.tune.TuneOptions;
import dev.kiln.autoschedule.tune.TuneResult;
import dev.kiln.lower.LowerDefault;
import dev.kiln.lower.Lowering;
import dev.kiln.runtime.Comparison;
import dev.kiln.runtime.NDArray;
import dev.kiln.schedule.Schedule;
import dev.kiln.target.Backend;
import dev.kiln.target.CompiledKernel;
import dev.kiln.target.CpuTarget;
import dev.kiln.target.Target;
import dev.kiln.te.ComputeDAG;
import dev.kiln.te.Tensor;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import org.bytedeco.javacpp.FloatPointer;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * Kiln's main job ({@code ./kiln run}): real workloads (a matmul and a ResNet conv2d layer),
 * auto-scheduled for this CPU on a short budget and JIT-compiled, printed against the untuned
 * program, Kiln's hand-written schedule, OpenBLAS and plain Java, all measured in the same run,
 * each kernel as a user calls it ({@link CallTimer}: back to back after a warm-up by time, for at
 * least {@code --min-seconds}), with the median and the p10-p90 spread of its calls.
 * Every Kiln result is checked element by element against plain-Java loops on seeded random
 * inputs.
 */
@Command(
        name = "kiln run",
        mixinStandardHelpOptions = true,
        description = "Tunes real workloads with Kiln and compares them with baselines measured in the same run.")
public final class MainJob implements Callable<Integer> {

    /** The workloads the job can run. */
    enum Which {
        matmul,
        conv2d
    }

    @Option(
            names = "--workload",
            split = ",",
            description = "Which workloads to run: ${COMPLETION-CANDIDATES} (default: all).")
    List<Which> workloads = List.of(Which.values());

    @Option(names = "--matmul-size", description = "M = N = K of the matmul (default: ${DEFAULT-VALUE}).")
    int matmulSize = 1024;

    @Option(
            names = "--trials",
            description = "Measured programs per workload for the "
                    + "auto-scheduler (default: ${DEFAULT-VALUE}; 0 skips tuning).")
    int trials = 64;

    @Option(
            names = "--time-budget",
            description = "Tuning time limit per workload in seconds (default: ${DEFAULT-VALUE}).")
    int timeBudgetSeconds = 120;

    @Option(
            names = "--log",
            description = "Tuning log (JSON lines); a later run resumes from it (default: ${DEFAULT-VALUE}).")
    Path log = Path.of("kiln-tuning.jsonl");

    @Option(names = "--seed", description = "Seed of the inputs and of the search (default: ${DEFAULT-VALUE}).")
    long seed = 2026;

    @Option(names = "--show-ir", description = "Print the lowered loop program of the best schedule.")
    boolean showIr;

    @Option(
            names = "--warmup-ms",
            description =
                    "Warm-up by time before each kernel's timed calls, in ms: it stops earlier once the times settle "
                            + "(default: ${DEFAULT-VALUE}).")
    double warmupMs = 200;

    @Option(
            names = "--min-seconds",
            description = "Each kernel is called back to back for at least this long, and at least 20 times (default: "
                    + "${DEFAULT-VALUE}).")
    double minSeconds = 1.0;

    public static void main(String[] args) {
        System.exit(new CommandLine(new MainJob())
                .setCaseInsensitiveEnumValuesAllowed(true)
                .execute(args));
    }

    @Override
    public Integer call() {
        CpuTarget target = ((CpuTarget) Target.cpu()).withFastMath(true);
        System.out.println("Kiln main job on " + target);
        System.out.println("Baselines run in this process: plain Java loops (single thread) and, for matmul, OpenBLAS "
                + OpenBlas.coreName() + " kernel on " + target.cores() + " threads (OPENBLAS_CORETYPE="
                + System.getenv("OPENBLAS_CORETYPE") + ").");
        System.out.println(
                "Kiln results are checked against the plain-Java result (rtol 1e-3, atol 1e-3: FMA contraction"
                        + " and another summation order change float32 rounding).");
        System.out.println();
        boolean ok = true;
        for (Which w : workloads) {
            Workload wl =
                    switch (w) {
                        case matmul -> Workloads.matmul(matmulSize, matmulSize, matmulSize);
                        case conv2d -> Workloads.conv2dNhwc(1, 56, 56, 64, 64, 3, 1, 1); // ResNet-18/50 conv2_x
                    };
            ok &= run(wl, w == Which.matmul, target);
        }
        System.out.println(
                ok ? "All Kiln outputs match the plain-Java reference." : "SOME OUTPUTS DIFFER (see above).");
        return ok ? 0 : 1;
    }

    /** A row of the table: the variant, every timed call, the check. */
    private record Row(String variant, CallTimer.Stats stats, String check) {
        double seconds() {
            return stats.median();
        }
    }

    /** How a kernel is timed: as a user calls it, back to back after a warm-up by time. */
    private CallTimer.Policy kernelTiming() {
        return new CallTimer.Policy(warmupMs, 20, minSeconds, 100_000, Math.max(10, 5 * minSeconds));
    }

    private boolean run(Workload w, boolean isMatmul, CpuTarget target) {
        ComputeDAG dag = new ComputeDAG(List.of(w.output()));
        long flops = dag.flopCount();
        List<NDArray> inputs = new ArrayList<>();
        for (int i = 0; i < w.inputs().size(); i++) {
            Tensor t = w.inputs().get(i);
            inputs.add(NDArray.random(t.dtype(), seed + i, t.shape().toArray()));
        }
        List<float[]> data = inputs.stream().map(NDArray::toFloatArray).toList();
        List<Row> rows = new ArrayList<>();
        float[][] ref = new float[1][];
        // plain Java is the slow reference: 3 calls, fewer if they pass 2 s
        CallTimer.Stats javaTime =
                CallTimer.time(() -> ref[0] = w.reference().compute(data), new CallTimer.Policy(0, 3, 0, 3, 2));
        NDArray expected = NDArray.fromFloats(ref[0], w.output().shape().toArray());
        rows.add(new Row("plain Java loops, 1 thread", javaTime, "reference"));
        if (isMatmul) {
            rows.add(new Row(
                    "OpenBLAS sgemm, " + target.cores() + " threads",
                    openBlas(data, matmulSize, target.cores(), kernelTiming()),
                    ""));
        }

        boolean ok = true;
        List<Tensor> args = new ArrayList<>(w.inputs());
        args.add(w.output());
        ok &= kiln(rows, "Kiln, default schedule", LowerDefault.lower("default", args), target, inputs, expected, w);
        if (isMatmul) {
            Schedule hand = MatmulSchedules.tiled(dag, MatmulSchedules.Tiles.avx512());
            ok &= kiln(rows, "Kiln, hand-written schedule", Lowering.lower("hand", hand), target, inputs, expected, w);
        }
        if (trials > 0) {
            TuneOptions opts = TuneOptions.builder()
                    .trials(trials)
                    .seed(seed)
                    .logFile(log)
                    .timeBudget(Duration.ofSeconds(timeBudgetSeconds))
                    .build();
            try (TuneResult r = AutoSchedule.tune(dag, target, opts)) {
                System.out.println("  " + r.summary());
                if (showIr) System.out.println(Lowering.lower("tuned", r.schedule()));
                ok &= kiln(
                        rows,
                        "Kiln, auto-scheduled (" + r.trials() + " trials)",
                        Lowering.lower("tuned", r.schedule()),
                        target,
                        inputs,
                        expected,
                        w);
            }
        }
        print(w.name(), flops, dag.hasFloatArithmetic(), rows);
        inputs.forEach(NDArray::close);
        expected.close();
        return ok;
    }

    private boolean kiln(
            List<Row> rows,
            String variant,
            dev.kiln.tir.PrimFunc f,
            Target target,
            List<NDArray> inputs,
            NDArray expected,
            Workload w) {
        try (CompiledKernel k = Backend.forTarget(target).compile(f, target);
                NDArray out =
                        NDArray.allocate(w.output().dtype(), w.output().shape().toArray())) {
            List<NDArray> all = new ArrayList<>(inputs);
            all.add(out);
            NDArray[] argv = all.toArray(NDArray[]::new);
            CallTimer.Stats t = CallTimer.time(() -> k.call(argv), kernelTiming());
            Comparison cmp = out.compareTo(expected, 1e-3, 1e-3);
            rows.add(new Row(variant, t, cmp.ok() ? "OK" : "MISMATCH: " + cmp.report()));
            return cmp.ok();
        }
    }

    private static CallTimer.Stats openBlas(List<float[]> data, int n, int threads, CallTimer.Policy timing) {
        OpenBlas.setThreads(threads);
        try (FloatPointer a = new FloatPointer(data.get(0));
                FloatPointer b = new FloatPointer(data.get(1));
                FloatPointer c = new FloatPointer((long) n * n)) {
            return CallTimer.time(() -> OpenBlas.sgemm(n, n, n, a, b, c), timing);
        }
    }

    /** The table of one workload; an integer computation is counted in GOP and rated in GOP/s. */
    private static void print(String name, long flops, boolean floatArithmetic, List<Row> rows) {
        double java = rows.get(0).seconds();
        String unit = ComputeDAG.rateUnit(floatArithmetic);
        System.out.printf(
                Locale.ROOT,
                "%s: %.3f %s (median of back-to-back calls after a warm-up; p10-p90 the spread)%n",
                name,
                flops / 1e9,
                floatArithmetic ? "GFLOP" : "GOP");
        System.out.printf(
                Locale.ROOT,
                "  %-40s %12s %19s %7s %10s %12s  %s%n",
                "variant",
                "median",
                "p10-p90 ms",
                "calls",
                unit,
                "vs Java",
                "check");
        for (Row r : rows) {
            System.out.printf(
                    Locale.ROOT,
                    "  %-40s %9.3f ms %19s %7d %10.1f %11.1fx  %s%n",
                    r.variant(),
                    r.seconds() * 1e3,
                    String.format(
                            Locale.ROOT,
                            "%.3f-%.3f",
                            r.stats().p10() * 1e3,
                            r.stats().p90() * 1e3),
                    r.stats().calls(),
                    flops / r.seconds() / 1e9,
                    java / r.seconds(),
                    r.check());
        }
        System.out.println();
    }
}
