package dev.kiln.autoschedule.bench;

import dev.kiln.autoschedule.AutoSchedule;
import dev.kiln.autoschedule.Candidate;
import dev.kiln.autoschedule.SearchTask;
import dev.kiln.autoschedule.Workloads;
import dev.kiln.autoschedule.annotate.InitPopulation;
import dev.kiln.autoschedule.feature.FeatureExtractor;
import dev.kiln.autoschedule.feature.FeatureLayout;
import dev.kiln.autoschedule.feature.ProgramFeatures;
import dev.kiln.autoschedule.measure.MeasureResult;
import dev.kiln.autoschedule.model.Gbdt;
import dev.kiln.autoschedule.model.GbdtCostModel;
import dev.kiln.autoschedule.model.GbdtParams;
import dev.kiln.autoschedule.model.Objective;
import dev.kiln.autoschedule.search.Trial;
import dev.kiln.autoschedule.sketch.SketchGenerator;
import dev.kiln.ir.DType;
import dev.kiln.nn.Conv;
import dev.kiln.target.CpuTarget;
import dev.kiln.target.Target;
import dev.kiln.te.ComputeDAG;
import dev.kiln.te.Te;
import dev.kiln.te.Tensor;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * The cost model's quality and speed (issue 6), not part of the test suite (the class name does
 * not end in Test). Run with
 * {@code ./kiln mvn verify -pl autoschedule -am -Dtest=CostModelBenchmark -Dsurefire.failIfNoSpecifiedTests=false}
 * (add {@code -Dkiln.bench.programs=N} for another number of measured programs per workload).
 *
 * <ul>
 *   <li>{@link #quality}: random programs of GEMM 512 and of the C2D layer 56x56x64 -> 64 (1x1)
 *       are measured single-threaded in a child JVM (kept in
 *       {@code autoschedule/target/costmodel-bench/measured.jsonl}, reused by later runs); in
 *       4-fold cross-validation the model trains on three folds of both workloads together and
 *       scores the held-out fold of each: pairwise accuracy, recall@30 and R^2 of the predicted
 *       score against the normalised throughput.</li>
 *   <li>{@link #trainingTime}: retraining on 10,000 sampled programs (4 workloads) with synthetic
 *       labels, on 1 and 2 threads.</li>
 * </ul>
 * Results are printed and written to {@code autoschedule/target/costmodel-bench/*.txt}.
 */
class CostModelBenchmark {
    static final Path DIR = Path.of("target", "costmodel-bench");
    static final int FOLDS = 4;

    record Workload(String name, ComputeDAG dag) {}

    static List<Workload> workloads() {
        Tensor data = Te.placeholder("data", DType.FLOAT32, 1, 56, 56, 64);
        Tensor weight = Te.placeholder("weight", DType.FLOAT32, 1, 1, 64, 64);
        Tensor data3 = Te.placeholder("data", DType.FLOAT32, 1, 14, 14, 256);
        Tensor weight3 = Te.placeholder("weight", DType.FLOAT32, 3, 3, 256, 256);
        Tensor dwData = Te.placeholder("data", DType.FLOAT32, 1, 112, 112, 32);
        Tensor dwWeight = Te.placeholder("weight", DType.FLOAT32, 3, 3, 32, 1);
        return List.of(new Workload("GEMM 512", Workloads.matmul(512, 512, 512)),
                new Workload("C2D 56x56x64->64 1x1", ComputeDAG.of(Conv.conv2dNhwc(data, weight, 1, 0))),
                new Workload("C2D 14x14x256->256 3x3", ComputeDAG.of(Conv.conv2dNhwc(data3, weight3, 1, 1))),
                new Workload("DEP 112x112x32 3x3", ComputeDAG.of(Conv.depthwiseConv2dNhwc(dwData, dwWeight, 1, 1))));
    }

    /** A model to evaluate: tree settings (with the loss), the least sample weight, and the features it reads. */
    record Variant(String name, GbdtParams params, double minWeight, int features) {}

    static List<Variant> variants() {
        GbdtParams kiln = GbdtParams.defaults();
        int all = FeatureLayout.LENGTH, ansor = FeatureLayout.ANSOR_LENGTH;
        return List.of(
                new Variant("Ansor: 164 features, squared error weighted by label, depth 10, eta 0.2", GbdtParams.ansor(), 0.0, ansor),
                new Variant("164 features, squared error, uniform weights, depth 6, eta 0.1", kiln.withObjective(Objective.SQUARED_ERROR), 1.0, ansor),
                new Variant("189 features, squared error, uniform weights, depth 6, eta 0.1", kiln.withObjective(Objective.SQUARED_ERROR), 1.0, all),
                new Variant("164 features, pairwise rank", kiln.withObjective(Objective.PAIRWISE_RANK), 1.0, ansor),
                new Variant("189 features, pairwise rank", kiln.withObjective(Objective.PAIRWISE_RANK), 1.0, all),
                new Variant("189 features, pairwise rank uniform", kiln.withObjective(Objective.PAIRWISE_RANK_UNIFORM), 1.0, all),
                new Variant("189 features, pairwise rank, 256 rounds, 32 pairs", kiln.withObjective(Objective.PAIRWISE_RANK).withRounds(256).withPairsPerProgram(32), 1.0, all));
    }

    /** The log of measured programs of workload {@code i}. */
    static Path logOf(Path dir, int i) {
        return dir.resolve("measured-" + i + ".jsonl");
    }

    /** Evaluates {@link #variants()} on existing logs of measured programs (argument: their folder), without measuring. */
    public static void main(String[] args) {
        CpuTarget target = Target.cpu().withCores(1);
        List<SearchTask> tasks = new ArrayList<>();
        List<List<Trial>> data = new ArrayList<>();
        List<String> names = new ArrayList<>();
        for (int i = 0; i < workloads().size(); i++) {
            Workload w = workloads().get(i);
            SearchTask task = AutoSchedule.task(w.dag(), target);
            List<Trial> trials = Files.exists(logOf(Path.of(args[0]), i)) ? MeasuredPrograms.load(logOf(Path.of(args[0]), i), task) : List.of();
            System.out.println(w.name() + ": " + trials.size() + " programs");
            if (trials.isEmpty()) continue;
            tasks.add(task);
            data.add(trials);
            names.add(w.name());
        }
        System.out.print(evaluate(variants(), names, tasks, data));
    }

    /**
     * Measures (or reuses) {@code -Dkiln.bench.programs} random programs per workload (only those
     * of {@code -Dkiln.bench.only=0,2} if given; one log per workload, so that two runs can measure
     * different workloads at once), then evaluates the variants unless
     * {@code -Dkiln.bench.measureOnly=true}.
     */
    @Test
    void quality() throws IOException {
        Files.createDirectories(DIR);
        int n = Integer.getInteger("kiln.bench.programs", 600);
        String only = System.getProperty("kiln.bench.only", "");
        CpuTarget target = Target.cpu().withCores(1);
        List<SearchTask> tasks = new ArrayList<>();
        List<List<Trial>> data = new ArrayList<>();
        List<String> names = new ArrayList<>();
        StringBuilder out = new StringBuilder("load average before: " + load() + "\n");
        for (int i = 0; i < workloads().size(); i++) {
            if (!only.isEmpty() && !List.of(only.split(",")).contains(Integer.toString(i))) continue;
            Workload w = workloads().get(i);
            Path log = logOf(DIR, i);
            SearchTask task = AutoSchedule.task(w.dag(), target);
            MeasuredPrograms.ensure(log, task, target, n, 11);
            List<Trial> trials = MeasuredPrograms.load(log, task);
            tasks.add(task);
            data.add(trials);
            names.add(w.name());
            long valid = trials.stream().filter(t -> t.result().ok()).count();
            double best = trials.stream().filter(t -> t.result().ok()).mapToDouble(t -> t.result().gflops(w.dag().flopCount()))
                    .max().orElse(0);
            out.append(String.format(Locale.ROOT, "%s: %d programs measured, %d valid, best %.1f GFLOP/s%n", w.name(),
                    trials.size(), valid, best));
        }
        if (Boolean.getBoolean("kiln.bench.measureOnly")) {
            System.out.print(out);
            return;
        }
        out.append(evaluate(variants(), names, tasks, data));
        out.append("load average after: ").append(load()).append('\n');
        System.out.print(out);
        Files.writeString(DIR.resolve("quality.txt"), out);
    }

    /** 4-fold cross-validation of each variant on the measured programs of the tasks; a Markdown table. */
    static String evaluate(List<Variant> variants, List<String> names, List<SearchTask> tasks, List<List<Trial>> data) {
        StringBuilder out = new StringBuilder("\n| model | workload | pairwise accuracy | recall@30 | R^2 | train s |\n|---|---|---|---|---|---|\n");
        for (Variant v : variants) {
            double[][] sums = new double[tasks.size()][4];
            for (int fold = 0; fold < FOLDS; fold++) {
                int validTrain = 0;
                for (int t = 0; t < tasks.size(); t++) {
                    for (int i = 0; i < data.get(t).size(); i++) {
                        if (foldOf(i, t) != fold && inTraining(i, t) && data.get(t).get(i).result().ok()) validTrain++;
                    }
                }
                // Warm-up = all valid training programs: the trees are trained once, after the last task's data.
                GbdtCostModel model = new GbdtCostModel(v.params(), validTrain, v.minWeight(), 1, 1 << 14, v.features());
                double[] bestTrain = new double[tasks.size()];
                for (int t = 0; t < tasks.size(); t++) {
                    List<Candidate> cs = new ArrayList<>();
                    List<MeasureResult> rs = new ArrayList<>();
                    for (int i = 0; i < data.get(t).size(); i++) {
                        if (foldOf(i, t) == fold || !inTraining(i, t)) continue;
                        Trial tr = data.get(t).get(i);
                        cs.add(tr.candidate());
                        rs.add(tr.result());
                        if (tr.result().ok()) bestTrain[t] = Math.max(bestTrain[t], 1 / tr.result().median());
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
                    double[] truth = thr.stream().mapToDouble(Double::doubleValue).toArray();
                    double norm = bestTrain[t];
                    double[] label = Arrays.stream(truth).map(x -> x / norm).toArray();
                    sums[t][0] += Metrics.pairwiseAccuracy(score, truth);
                    sums[t][1] += Metrics.recallAt(30, score, truth);
                    sums[t][2] += Metrics.r2(score, label);
                    sums[t][3] += model.lastTrainSeconds();
                }
            }
            for (int t = 0; t < tasks.size(); t++) {
                out.append(String.format(Locale.ROOT, "| %s | %s | %.3f | %.3f | %.3f | %.2f |%n", v.name(),
                        names.get(t), sums[t][0] / FOLDS, sums[t][1] / FOLDS, sums[t][2] / FOLDS,
                        sums[t][3] / FOLDS));
            }
        }
        return out.toString();
    }

    /** Whether program {@code i} of task {@code t} may train (a share {@code -Dkiln.bench.trainShare}, default 1, for learning curves). */
    static boolean inTraining(int i, int t) {
        double share = Double.parseDouble(System.getProperty("kiln.bench.trainShare", "1"));
        long h = (i + 3) * 0xD6E8FEB86659FD93L ^ (t + 1) * 0x9E3779B97F4A7C15L;
        return ((h ^ (h >>> 29)) * 0xBF58476D1CE4E5B9L >>> 40) % 1000 < share * 1000;
    }

    /** The fold of program {@code i} of task {@code t}: a fixed pseudo-random assignment. */
    static int foldOf(int i, int t) {
        long h = (i + 1) * 0x9E3779B97F4A7C15L ^ (t + 7) * 0xC2B2AE3D27D4EB4FL;
        h ^= h >>> 31;
        return (int) Math.floorMod(h * 0xBF58476D1CE4E5B9L >>> 32, FOLDS);
    }

    @Test
    void trainingTime() throws IOException {
        Files.createDirectories(DIR);
        List<ProgramFeatures> programs = new ArrayList<>();
        long fx0 = 0;
        int extracted = 0;
        for (ComputeDAG dag : List.of(Workloads.matmul(512, 512, 512), Workloads.conv2dBnRelu(1, 14, 14, 32, 32, 3, 1, 1),
                Workloads.softmaxNm(128, 256), Workloads.conv2dNhwcRelu(1, 28, 28, 32, 32, 3))) {
            SearchTask task = Workloads.task(dag);
            List<Candidate> cs = InitPopulation.sample(task, SketchGenerator.cpu().generate(task), 2500,
                    new SplittableRandom(7)).candidates();
            FeatureExtractor fx = FeatureExtractor.of(task);
            long t0 = cpuNanos();
            for (Candidate c : cs) programs.add(fx.extract(c));
            extracted += cs.size();
            fx0 += cpuNanos() - t0;
        }
        int n = programs.size(), rows = programs.stream().mapToInt(ProgramFeatures::rows).sum(), w = FeatureLayout.LENGTH;
        float[] x = new float[rows * w];
        int[] start = new int[n + 1];
        double[] y = new double[n], wt = new double[n];
        SplittableRandom r = new SplittableRandom(1);
        for (int q = 0; q < n; q++) {
            ProgramFeatures f = programs.get(q);
            System.arraycopy(f.values(), 0, x, start[q] * w, f.rows() * w);
            start[q + 1] = start[q] + f.rows();
            float[] v = f.values();
            double s = Math.sin(v[0] * 0.3) + 0.1 * v[FeatureLayout.buffer(0) + FeatureLayout.B_LINES] - 0.05 * v[161]
                    + (v[FeatureLayout.PARALLEL] > 0 ? 0.5 : 0) + 0.2 * v[FeatureLayout.CURVE + 3] + 0.05 * r.nextGaussian();
            y[q] = 1 / (1 + Math.exp(-s));
            wt[q] = 1;
        }
        Gbdt.TrainingSet d = new Gbdt.TrainingSet(x, w, start, y, wt);
        StringBuilder out = new StringBuilder(String.format(Locale.ROOT,
                "%d programs, %d statements; feature extraction %.0f programs/s on one core (CPU time, lowering included)%n"
                        + "load average before: %s%n| setting | threads | retrain s (median of 3) | runs |%n|---|---|---|---|%n",
                n, rows, extracted / (fx0 / 1e9), load()));
        for (var s : List.of(new Object[] {"kiln default (128 rounds, depth 6)", GbdtParams.defaults()},
                new Object[] {"ansor (100 rounds, depth 10)", GbdtParams.ansor()})) {
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
                out.append(String.format(Locale.ROOT, "| %s | %d | %.2f | %s |%n", s[0], threads, sorted[1],
                        Arrays.toString(Arrays.stream(t).map(v -> Math.round(v * 100) / 100.0).toArray())));
            }
        }
        out.append("load average after: ").append(load()).append('\n');
        System.out.print(out);
        Files.writeString(DIR.resolve("training-time.txt"), out);
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
