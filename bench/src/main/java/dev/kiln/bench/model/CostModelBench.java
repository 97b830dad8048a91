package dev.kiln.bench.model;

import dev.kiln.autoschedule.Candidate;
import dev.kiln.autoschedule.SearchTask;
import dev.kiln.autoschedule.feature.FeatureExtractor;
import dev.kiln.autoschedule.feature.FeatureLayout;
import dev.kiln.autoschedule.feature.ProgramFeatures;
import dev.kiln.autoschedule.measure.MeasureResult;
import dev.kiln.autoschedule.model.Gbdt;
import dev.kiln.autoschedule.model.GbdtCostModel;
import dev.kiln.autoschedule.model.GbdtParams;
import dev.kiln.autoschedule.model.Objective;
import dev.kiln.autoschedule.search.TargetRules;
import dev.kiln.autoschedule.search.Trial;
import dev.kiln.autoschedule.tune.AutoSchedule;
import dev.kiln.target.CpuTarget;
import dev.kiln.target.Target;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * The cost model's quality and training time (issue 6): {@code ./kiln model-bench [options]}.
 *
 * <ul>
 *   <li>Quality (the default): random programs of each workload are measured single-threaded in
 *       a child JVM ({@link MeasuredPrograms}; one tuning log per workload in {@code --dir},
 *       reused and topped up by later runs). Then, in 4-fold cross-validation, each model variant
 *       trains on three folds of all workloads together (labels normalised per workload) and
 *       scores the held-out fold of each workload: pairwise accuracy, recall@30 and R^2
 *       ({@link Metrics}) of the prediction against the normalised throughput.</li>
 *   <li>{@code --training-time}: retraining on 10,000 sampled programs of four workloads with
 *       synthetic labels, 1 and 2 threads, and the feature extraction rate.</li>
 * </ul>
 * The report is printed and written to {@code --dir}.
 */
@Command(
        name = "kiln model-bench",
        mixinStandardHelpOptions = true,
        description = "Measures random programs and cross-validates the cost model variants on them.")
public final class CostModelBench implements Callable<Integer> {
    static final int FOLDS = 4;
    static final String TRAINING_WORKLOADS = "gemm:512,c2d:2,dep:0,softmax:128x256";

    @Option(
            names = "--workloads",
            description = "Comma-separated workloads (gemm:N, c2d:I, dep:I, softmax:NxM; default: ${DEFAULT-VALUE}).")
    String workloads = "gemm:512,c2d:1,c2d:2,dep:0";

    @Option(names = "--programs", description = "Random programs to measure per workload (default: ${DEFAULT-VALUE}).")
    int programs = 1600;

    @Option(names = "--dir", description = "Where the measured programs and the report go (default: ${DEFAULT-VALUE}).")
    Path dir = Path.of("kiln-bench", "costmodel");

    @Option(names = "--measure-only", description = "Measure, do not evaluate (to split the measuring over runs).")
    boolean measureOnly;

    @Option(names = "--no-measure", description = "Evaluate the programs already measured, measure nothing.")
    boolean noMeasure;

    @Option(
            names = "--train-share",
            description = "Share of each training fold used (for learning curves; default: ${DEFAULT-VALUE}).")
    double trainShare = 1;

    @Option(names = "--training-time", description = "Time retraining on 10,000 programs instead.")
    boolean trainingTime;

    public static void main(String[] args) {
        System.exit(new CommandLine(new CostModelBench()).execute(args));
    }

    /** A model to evaluate: tree settings (with the loss), the least sample weight, and the features it reads. */
    record Variant(String name, GbdtParams params, double minWeight, int features) {}

    static List<Variant> variants() {
        GbdtParams kiln = GbdtParams.defaults();
        int all = FeatureLayout.LENGTH, ansor = FeatureLayout.ANSOR_LENGTH;
        return List.of(
                new Variant(
                        "Ansor's model: 164 features, squared error weighted by label, depth 10, eta 0.2",
                        GbdtParams.ansor(),
                        0.0,
                        ansor),
                new Variant(
                        "164 features, squared error, uniform weights, depth 6, eta 0.1",
                        kiln.withObjective(Objective.SQUARED_ERROR),
                        1.0,
                        ansor),
                new Variant(
                        "189 features, squared error, uniform weights",
                        kiln.withObjective(Objective.SQUARED_ERROR),
                        1.0,
                        all),
                new Variant("164 features, pairwise rank", kiln, 1.0, ansor),
                new Variant("Kiln's default: 189 features, pairwise rank", kiln, 1.0, all),
                new Variant(
                        "189 features, pairwise rank, pairs weighted alike",
                        kiln.withObjective(Objective.PAIRWISE_RANK_UNIFORM),
                        1.0,
                        all),
                new Variant(
                        "189 features, pairwise rank, 256 rounds, 32 pairs",
                        kiln.withRounds(256).withPairsPerProgram(32),
                        1.0,
                        all));
    }

    /** The log of measured programs of a workload. */
    static Path logOf(Path dir, BenchWorkloads.Workload w) {
        return dir.resolve("measured-" + w.spec().replace(':', '-') + ".jsonl");
    }

    @Override
    public Integer call() throws IOException {
        Files.createDirectories(dir);
        if (trainingTime) {
            String report = trainingTime();
            System.out.print(report);
            Files.writeString(dir.resolve("training-time.txt"), report);
            return 0;
        }
        CpuTarget target = Target.cpu().withCores(1);
        List<SearchTask> tasks = new ArrayList<>();
        List<List<Trial>> data = new ArrayList<>();
        List<String> names = new ArrayList<>();
        StringBuilder out = new StringBuilder("load average before: " + load() + "\n");
        for (BenchWorkloads.Workload w : BenchWorkloads.list(workloads)) {
            Path log = logOf(dir, w);
            SearchTask task = AutoSchedule.task(w.dag(), target);
            if (!noMeasure) MeasuredPrograms.ensure(log, task, target, programs, 11);
            List<Trial> trials = Files.exists(log) ? MeasuredPrograms.load(log, task) : List.of();
            long valid = trials.stream().filter(t -> t.result().ok()).count();
            double best = trials.stream()
                    .filter(t -> t.result().ok())
                    .mapToDouble(t -> t.result().gflops(w.dag().flopCount()))
                    .max()
                    .orElse(0);
            out.append(String.format(
                    Locale.ROOT,
                    "%s: %d programs measured, %d valid, best %.1f %s%n",
                    w.name(),
                    trials.size(),
                    valid,
                    best,
                    w.dag().rateUnit()));
            if (trials.isEmpty()) continue;
            tasks.add(task);
            data.add(trials);
            names.add(w.name());
        }
        if (measureOnly || tasks.isEmpty()) {
            System.out.print(out);
            return 0;
        }
        out.append(evaluate(variants(), names, tasks, data));
        out.append("load average after: ").append(load()).append('\n');
        System.out.print(out);
        Files.writeString(dir.resolve("quality.txt"), out);
        return 0;
    }

    String evaluate(List<Variant> variants, List<String> names, List<SearchTask> tasks, List<List<Trial>> data) {
        StringBuilder out = new StringBuilder(
                "\n| model | workload | pairwise accuracy | recall@30 | R^2 | train s |\n|---|---|---|---|---|---|\n");
        for (Variant v : variants) {
            double[][] sums = new double[tasks.size()][4];
            for (int fold = 0; fold < FOLDS; fold++) {
                int validTrain = 0;
                for (int t = 0; t < tasks.size(); t++) {
                    for (int i = 0; i < data.get(t).size(); i++) {
                        if (foldOf(i, t) != fold
                                && inTraining(i, t)
                                && data.get(t).get(i).result().ok()) validTrain++;
                    }
                }
                // Warm-up = all valid training programs: the trees are trained once, after the last task's data.
                GbdtCostModel model =
                        new GbdtCostModel(v.params(), validTrain, v.minWeight(), 1, 1 << 14, v.features());
                double[] bestTrain = new double[tasks.size()];
                for (int t = 0; t < tasks.size(); t++) {
                    List<Candidate> cs = new ArrayList<>();
                    List<MeasureResult> rs = new ArrayList<>();
                    for (int i = 0; i < data.get(t).size(); i++) {
                        if (foldOf(i, t) == fold || !inTraining(i, t)) continue;
                        Trial tr = data.get(t).get(i);
                        cs.add(tr.candidate());
                        rs.add(tr.result());
                        if (tr.result().ok())
                            bestTrain[t] =
                                    Math.max(bestTrain[t], 1 / tr.result().median());
                    }
                    model.update(tasks.get(t), cs, rs);
                }
                for (int t = 0; t < tasks.size(); t++) {
                    List<Candidate> cs = new ArrayList<>();
                    List<Double> thr = new ArrayList<>();
                    for (int i = 0; i < data.get(t).size(); i++) {
                        Trial tr = data.get(t).get(i);
                        if (foldOf(i, t) != fold || !tr.result().ok()) continue;
                        cs.add(tr.candidate());
                        thr.add(1 / tr.result().median());
                    }
                    double[] score = model.predict(tasks.get(t), cs);
                    double[] truth =
                            thr.stream().mapToDouble(Double::doubleValue).toArray();
                    double norm = bestTrain[t];
                    double[] label = Arrays.stream(truth).map(x -> x / norm).toArray();
                    sums[t][0] += Metrics.pairwiseAccuracy(score, truth);
                    sums[t][1] += Metrics.recallAt(30, score, truth);
                    sums[t][2] += Metrics.r2(score, label);
                    sums[t][3] += model.lastTrainSeconds();
                }
            }
            for (int t = 0; t < tasks.size(); t++) {
                out.append(String.format(
                        Locale.ROOT,
                        "| %s | %s | %.3f | %.3f | %.3f | %.2f |%n",
                        v.name(),
                        names.get(t),
                        sums[t][0] / FOLDS,
                        sums[t][1] / FOLDS,
                        sums[t][2] / FOLDS,
                        sums[t][3] / FOLDS));
            }
        }
        return out.toString();
    }

    boolean inTraining(int i, int t) {
        long h = (i + 3) * 0xD6E8FEB86659FD93L ^ (t + 1) * 0x9E3779B97F4A7C15L;
        return ((h ^ (h >>> 29)) * 0xBF58476D1CE4E5B9L >>> 40) % 1000 < trainShare * 1000;
    }

    public static int foldOf(int i, int t) {
        long h = (i + 1) * 0x9E3779B97F4A7C15L ^ (t + 7) * 0xC2B2AE3D27D4EB4FL;
        h ^= h >>> 31;
        return (int) Math.floorMod(h * 0xBF58476D1CE4E5B9L >>> 32, FOLDS);
    }

    String trainingTime() {
        List<ProgramFeatures> programs = new ArrayList<>();
        StringBuilder rates = new StringBuilder();
        long fx0 = 0;
        int extracted = 0;
        for (BenchWorkloads.Workload wl : BenchWorkloads.list(TRAINING_WORKLOADS)) {
            SearchTask task = AutoSchedule.task(wl.dag(), Target.cpu().withCores(1));
            List<Candidate> cs = TargetRules.cpu()
                    .population(task, TargetRules.cpu().sketches(task))
                    .sample(2500, new SplittableRandom(7))
                    .candidates();
            FeatureExtractor fx = FeatureExtractor.of(task);
            for (Candidate c : cs) programs.add(fx.extract(c));
            // Extraction speed: the best of 3 more passes (the first pass above warmed the JIT).
            long fastest = Long.MAX_VALUE;
            for (int pass = 0; pass < 3; pass++) {
                long t0 = cpuNanos();
                for (Candidate c : cs) fx.extract(c);
                fastest = Math.min(fastest, cpuNanos() - t0);
            }
            extracted += cs.size();
            fx0 += fastest;
            rates.append(String.format(Locale.ROOT, "%s %.0f/s, ", wl.name(), cs.size() / (fastest / 1e9)));
        }
        int n = programs.size(),
                rows = programs.stream().mapToInt(ProgramFeatures::rows).sum(),
                w = FeatureLayout.LENGTH;
        float[] x = new float[rows * w];
        int[] start = new int[n + 1];
        double[] y = new double[n], wt = new double[n];
        SplittableRandom r = new SplittableRandom(1);
        for (int q = 0; q < n; q++) {
            ProgramFeatures f = programs.get(q);
            System.arraycopy(f.values(), 0, x, start[q] * w, f.rows() * w);
            start[q + 1] = start[q] + f.rows();
            float[] v = f.values();
            double s = Math.sin(v[0] * 0.3)
                    + 0.1 * v[FeatureLayout.buffer(0) + FeatureLayout.B_LINES]
                    - 0.05 * v[161]
                    + (v[FeatureLayout.PARALLEL] > 0 ? 0.5 : 0)
                    + 0.2 * v[FeatureLayout.CURVE + 3]
                    + 0.05 * r.nextGaussian();
            y[q] = 1 / (1 + Math.exp(-s));
            wt[q] = 1;
        }
        Gbdt.TrainingSet d = new Gbdt.TrainingSet(x, w, start, y, wt);
        StringBuilder out = new StringBuilder(String.format(
                Locale.ROOT,
                "%d programs, %d statements; feature extraction %.0f programs/s on one core (CPU time, lowering "
                        + "included,"
                        + " best of 3 warm passes: %s)%n"
                        + "load average before: %s%n| setting | threads | retrain s (median of 3) | runs "
                        + "|%n|---|---|---|---|%n",
                n,
                rows,
                extracted / (fx0 / 1e9),
                rates.substring(0, Math.max(0, rates.length() - 2)),
                load()));
        for (var s : List.of(
                new Object[] {"Kiln's default (pairwise rank, 128 rounds, depth 6)", GbdtParams.defaults()},
                new Object[] {
                    "squared error, 128 rounds, depth 6", GbdtParams.defaults().withObjective(Objective.SQUARED_ERROR)
                },
                new Object[] {"Ansor's (squared error, 100 rounds, depth 10)", GbdtParams.ansor()})) {
            for (int threads : new int[] {1, 2}) {
                GbdtParams p = ((GbdtParams) s[1]).withThreads(threads);
                Gbdt.train(d, p); // warm-up
                double[] t = new double[3];
                for (int k = 0; k < 3; k++) {
                    long t0 = System.nanoTime();
                    Gbdt.train(d, p);
                    t[k] = (System.nanoTime() - t0) / 1e9;
                }
                double[] sorted = t.clone();
                Arrays.sort(sorted);
                out.append(String.format(
                        Locale.ROOT,
                        "| %s | %d | %.2f | %s |%n",
                        s[0],
                        threads,
                        sorted[1],
                        Arrays.toString(Arrays.stream(t)
                                .map(v -> Math.round(v * 100) / 100.0)
                                .toArray())));
            }
        }
        out.append("load average after: ").append(load()).append('\n');
        return out.toString();
    }

    static long cpuNanos() {
        return ManagementFactory.getThreadMXBean().getCurrentThreadCpuTime();
    }

    static String load() {
        try {
            return Files.readString(Path.of("/proc/loadavg")).trim();
        } catch (IOException e) {
            return "unknown";
        }
    }
}
