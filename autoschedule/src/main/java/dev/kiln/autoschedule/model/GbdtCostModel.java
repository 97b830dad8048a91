package dev.kiln.autoschedule.model;

import dev.kiln.autoschedule.Candidate;
import dev.kiln.autoschedule.SearchTask;
import dev.kiln.autoschedule.feature.FeatureExtractor;
import dev.kiln.autoschedule.feature.FeatureLayout;
import dev.kiln.autoschedule.feature.ProgramFeatures;
import dev.kiln.autoschedule.measure.MeasureResult;
import dev.kiln.ir.KilnException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The learned cost model: gradient-boosted trees ({@link Gbdt}) on per-statement features
 * ({@link FeatureExtractor}), a program's score being the sum of its statements' scores (Ansor's
 * pack-sum).
 *
 * <p>Every measured program is kept with its throughput (1 / median time; 0 for a failed
 * measurement). Labels are normalised per task (workload and target): throughput over the best
 * throughput of the task, so the best program of each task has label 1. A sample's weight is its
 * label, at least {@code minWeight}: Ansor weighs by the label (minWeight 0, fast programs matter
 * more); Kiln's default is 1, uniform weights.
 *
 * <p>Where Kiln departs from Ansor (each measured on held-out programs, docs/PERFORMANCE.md):
 * the trees learn a pairwise ranking loss inside each task ({@link Objective#PAIRWISE_RANK})
 * rather than the squared error, since the search only needs the order of programs; the raw
 * ranking scores are then mapped onto the labels by a monotone {@link Calibration} fitted per
 * task, so predictions still read as normalised throughputs (the evolution's roulette weighs
 * them, and R^2 is measured on them) without changing the order. The model reads all
 * {@link FeatureLayout#LENGTH} features (Ansor's 164 and Kiln's inner-loop group) unless told to
 * read fewer.
 *
 * <p>The trees are retrained from scratch on every update with new data. Until
 * {@code warmupPrograms} valid programs have been measured, scores are uniform random numbers
 * (as Ansor's model gives before its warm-up; here a hash of the seed and the program, see
 * {@link RandomCostModel}). A program whose features are empty (it cannot be lowered) scores
 * -inf.
 *
 * <p>Thread-safe: several threads may score at once (each on its own programs); updates are
 * serialised and replace the trees and calibrations atomically.
 */
public final class GbdtCostModel implements CostModel {
    private final GbdtParams params;
    private final int warmupPrograms;
    private final double minWeight;
    private final long seed;
    private final FeatureCache cache;
    private final int width;
    /** Trees pretrained on other tasks: they score programs before the warm-up and are boosted on; null without. */
    private final PretrainedModel prior;

    private final List<ProgramFeatures> features = new ArrayList<>();
    private final List<Double> throughputs = new ArrayList<>();
    private final List<String> groups = new ArrayList<>();
    private final Map<String, Double> best = new HashMap<>();
    private int valid, trainedOn;
    private volatile Gbdt model;
    private volatile Map<String, Calibration> calibrations = Map.of();
    private volatile Calibration pooled;
    private long lastTrainNanos;

    /**
     * A model with these tree settings, used once {@code warmupPrograms} valid programs are
     * measured, sample weights of at least {@code minWeight}, warm-up scores from {@code seed},
     * and a feature cache of {@code cacheSize} programs.
     */
    public GbdtCostModel(GbdtParams params, int warmupPrograms, double minWeight, long seed, int cacheSize) {
        this(params, warmupPrograms, minWeight, seed, cacheSize, FeatureLayout.LENGTH);
    }

    /**
     * A model that looks at the first {@code features} entries of each statement's features only
     * ({@link FeatureLayout#ANSOR_LENGTH} for Ansor's features without Kiln's additions).
     */
    public GbdtCostModel(
            GbdtParams params, int warmupPrograms, double minWeight, long seed, int cacheSize, int features) {
        this(params, warmupPrograms, minWeight, seed, cacheSize, features, null);
    }

    private GbdtCostModel(
            GbdtParams params,
            int warmupPrograms,
            double minWeight,
            long seed,
            int cacheSize,
            int features,
            PretrainedModel prior) {
        this.prior = prior;
        if (prior != null && features != FeatureLayout.LENGTH) {
            throw new KilnException(
                    "cost model: a pretrained model reads all " + FeatureLayout.LENGTH + " features, not " + features);
        }
        if (features < 1 || features > FeatureLayout.LENGTH) {
            throw new KilnException("cost model: features must be in 1.." + FeatureLayout.LENGTH + ", got " + features);
        }
        this.width = features;
        if (warmupPrograms < 1)
            throw new KilnException("cost model: warmupPrograms must be at least 1, got " + warmupPrograms);
        if (!(minWeight >= 0) || minWeight > 1)
            throw new KilnException("cost model: minWeight must be in 0..1, got " + minWeight);
        this.params = params;
        this.warmupPrograms = warmupPrograms;
        this.minWeight = minWeight;
        this.seed = seed;
        this.cache = new FeatureCache(cacheSize);
    }

    /** {@link GbdtParams#defaults()}, warm-up of 32 valid programs, uniform weights, a cache of 16384 programs. */
    public static GbdtCostModel defaults(long seed) {
        return new GbdtCostModel(GbdtParams.defaults(), 32, 1.0, seed, 16384);
    }

    /**
     * Ansor's model: {@link GbdtParams#ansor()} (squared error), samples weighted by their label,
     * Ansor's 164 features only (for comparisons).
     */
    public static GbdtCostModel ansor(long seed) {
        return new GbdtCostModel(GbdtParams.ansor(), 32, 0.0, seed, 16384, FeatureLayout.ANSOR_LENGTH);
    }

    /**
     * This model (same settings, no data) starting from {@code pretrained}: before the warm-up its
     * trees score the programs (a new task starts warm, not random), and every retraining adds
     * trees on top of them fitted to this task's measurements (continued boosting), so it is
     * still updated online.
     */
    public GbdtCostModel withPretrained(PretrainedModel pretrained) {
        return new GbdtCostModel(params, warmupPrograms, minWeight, seed, cache.capacity(), width, pretrained);
    }

    /** The pretrained model this one starts from, if any. */
    public java.util.Optional<PretrainedModel> pretrained() {
        return java.util.Optional.ofNullable(prior);
    }

    @Override
    public String name() {
        return prior == null ? "gbdt" : "gbdt+pretrained";
    }

    @Override
    public synchronized void update(SearchTask task, List<Candidate> candidates, List<MeasureResult> results) {
        if (candidates.size() != results.size()) {
            throw new KilnException(
                    "cost model update: " + candidates.size() + " programs but " + results.size() + " results");
        }
        FeatureExtractor fx = FeatureExtractor.of(task);
        String group = task.workloadKey() + '\n' + task.targetDescription();
        for (int i = 0; i < candidates.size(); i++) {
            ProgramFeatures f = cache.get(task, fx, candidates.get(i));
            if (f.isEmpty()) continue;
            MeasureResult r = results.get(i);
            double t = r.ok() && r.cost() > 0 ? 1 / r.cost() : 0;
            features.add(f);
            throughputs.add(t);
            groups.add(group);
            if (t > 0) {
                valid++;
                best.merge(group, t, Math::max);
            }
        }
        if (valid >= warmupPrograms && features.size() > trainedOn) train();
    }

    private void train() {
        long t0 = System.nanoTime();
        int n = features.size(), rows = 0;
        for (ProgramFeatures f : features) rows += f.rows();
        int w = width, stride = FeatureLayout.LENGTH;
        float[] x = new float[rows * w];
        int[] start = new int[n + 1];
        double[] label = new double[n], weight = new double[n];
        int[] group = new int[n];
        Map<String, Integer> groupIds = new HashMap<>();
        for (int q = 0; q < n; q++) {
            group[q] = groupIds.computeIfAbsent(groups.get(q), k -> groupIds.size());
            ProgramFeatures f = features.get(q);
            for (int r = 0; r < f.rows(); r++) System.arraycopy(f.values(), r * stride, x, (start[q] + r) * w, w);
            start[q + 1] = start[q] + f.rows();
            Double b = best.get(groups.get(q));
            label[q] = b == null ? 0 : throughputs.get(q) / b;
            weight[q] = Math.max(minWeight, label[q]);
        }
        Gbdt.TrainingSet set = new Gbdt.TrainingSet(x, w, start, label, weight, group);
        Gbdt m = Gbdt.train(set, params, prior == null ? null : prior.trees());
        if (params.objective() != Objective.SQUARED_ERROR) calibrate(m, set, groupIds);
        model = m;
        trainedOn = n;
        lastTrainNanos = System.nanoTime() - t0;
    }

    /** Fits the map from raw ranking scores to labels, per task and pooled (for tasks not seen in training). */
    private void calibrate(Gbdt m, Gbdt.TrainingSet set, Map<String, Integer> groupIds) {
        int n = set.programs();
        double[] raw = new double[n];
        for (int q = 0; q < n; q++)
            raw[q] = m.predictProgram(set.x(), set.start()[q], set.start()[q + 1] - set.start()[q], width);
        Map<String, Calibration> byGroup = new HashMap<>();
        for (Map.Entry<String, Integer> e : groupIds.entrySet()) {
            int g = e.getValue();
            int[] members = java.util.stream.IntStream.range(0, n)
                    .filter(q -> set.group()[q] == g)
                    .toArray();
            byGroup.put(
                    e.getKey(),
                    Calibration.fit(
                            java.util.Arrays.stream(members)
                                    .mapToDouble(q -> raw[q])
                                    .toArray(),
                            java.util.Arrays.stream(members)
                                    .mapToDouble(q -> set.label()[q])
                                    .toArray()));
        }
        pooled = Calibration.fit(raw, set.label());
        calibrations = byGroup;
    }

    @Override
    public double[] predict(SearchTask task, List<Candidate> candidates) {
        double[] out = new double[candidates.size()];
        Gbdt m = model;
        if (m == null && prior == null) {
            for (int i = 0; i < out.length; i++)
                out[i] = RandomCostModel.score(seed, candidates.get(i).key());
            return out;
        }
        FeatureExtractor fx = FeatureExtractor.of(task);
        if (m == null) { // before the warm-up: the pretrained trees, calibrated over their own training tasks
            for (int i = 0; i < out.length; i++) out[i] = prior.score(cache.get(task, fx, candidates.get(i)));
            return out;
        }
        Calibration cal = params.objective() == Objective.SQUARED_ERROR
                ? null
                : calibrations.getOrDefault(task.workloadKey() + '\n' + task.targetDescription(), pooled);
        for (int i = 0; i < out.length; i++) {
            ProgramFeatures f = cache.get(task, fx, candidates.get(i));
            out[i] = f.isEmpty() ? Double.NEGATIVE_INFINITY : raw(m, f);
            if (cal != null) out[i] = cal.apply(out[i]);
        }
        return out;
    }

    /**
     * The sum of the statements' scores (rows are {@link FeatureLayout#LENGTH} apart; the model reads its first
     * entries).
     */
    private static double raw(Gbdt m, ProgramFeatures f) {
        return m.predictProgram(f.values(), 0, f.rows(), FeatureLayout.LENGTH);
    }

    @Override
    public boolean isRandom() {
        return model == null && prior == null;
    }

    /** Whether the trees have been trained (the warm-up is over). */
    public boolean trained() {
        return model != null;
    }

    /** Programs learned from so far (failed measurements included). */
    public synchronized int samples() {
        return features.size();
    }

    /** How long the last retraining took, in seconds (0 before the first). */
    public synchronized double lastTrainSeconds() {
        return lastTrainNanos / 1e9;
    }

    /** The feature cache (for its hit counts). */
    public FeatureCache cache() {
        return cache;
    }
}
