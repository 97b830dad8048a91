package dev.kiln.autoschedule.model;

import dev.kiln.autoschedule.Candidate;
import dev.kiln.autoschedule.SearchTask;
import dev.kiln.autoschedule.feature.FeatureExtractor;
import dev.kiln.autoschedule.feature.FeatureLayout;
import dev.kiln.autoschedule.feature.ProgramFeatures;
import dev.kiln.autoschedule.log.LogRecord;
import dev.kiln.autoschedule.log.TuningLog;
import dev.kiln.ir.KilnException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;

/**
 * Measured programs of many tasks, to pretrain a cost model on (as TenSet does): each program's
 * features ({@link FeatureExtractor} of its task) and its throughput (1 / median time; 0 for a
 * failed measurement), grouped by task. Labels are normalised per task, as the online model
 * normalises them, so tasks of any speed teach the same thing: which programs of a task are fast.
 *
 * <p>{@link #addLogs} reads Kiln's own tuning logs: a record is used when its workload key names
 * one of the given tasks (the log does not hold the computation, so the caller says which DAG
 * each key is) and its target is that task's target; the others are counted as unmatched.
 * Re-measurements of a program already in the log are left out.
 */
public final class PretrainingSet {
    /** One measured program. */
    record Program(String task, ProgramFeatures features, double throughput) {}

    private final List<Program> programs = new ArrayList<>();
    private final Map<String, Integer> perTask = new LinkedHashMap<>();
    private int unmatched, unreplayable;

    /**
     * Adds one measured program of {@code task} (throughput 0 for a failed one); programs that cannot be lowered are
     * skipped.
     */
    public void add(SearchTask task, Candidate c, double throughput) {
        if (!(throughput >= 0) || Double.isInfinite(throughput)) {
            throw new KilnException(
                    "pretraining set: throughput of a program of " + task.workloadKey() + " is " + throughput);
        }
        ProgramFeatures f = FeatureExtractor.of(task).extract(c);
        if (f.isEmpty()) {
            unreplayable++;
            return;
        }
        String key = task.workloadKey() + '\n' + task.targetDescription();
        programs.add(new Program(key, f, throughput));
        perTask.merge(key, 1, Integer::sum);
    }

    /**
     * Adds every record of {@code log} whose workload key is a key of {@code tasks} and whose
     * target is that task's, and that {@code keep} accepts; returns how many it added.
     */
    public int addLogs(Path log, Map<String, SearchTask> tasks, Predicate<SearchTask> keep) {
        int added = 0;
        try (TuningLog l = TuningLog.open(log)) {
            for (LogRecord r : l.records()) {
                if (!r.kind().equals(LogRecord.TRIAL)) continue; // a re-measurement of a program already read
                SearchTask t = tasks.get(r.workloadKey());
                if (t == null || !TuningLog.sameTarget(t.targetDescription(), r.target())) {
                    unmatched++;
                    continue;
                }
                if (!keep.test(t)) continue;
                Candidate c;
                try {
                    c = Candidate.of(r.schedule(t));
                } catch (KilnException e) {
                    unreplayable++;
                    continue;
                }
                double s = r.seconds();
                int before = programs.size();
                add(t, c, r.isValid() && Double.isFinite(s) && s > 0 ? 1 / s : 0);
                added += programs.size() - before;
            }
        }
        return added;
    }

    /**
     * How well a model ranks one task's measured programs.
     *
     * @param task              the workload key (and target, after a newline)
     * @param programs          measured programs of the task (failed ones included, as throughput 0)
     * @param pairwiseAccuracy  share of pairs of programs of different throughput that the model orders right (random:
     * 0.5)
     * @param firstPick         throughput of the program the model ranks first, over the best measured one
     * @param randomPick        the same for a program picked at random (the mean throughput over the best)
     * @param picksTo95         programs taken in the model's order until one reaches 95% of the best throughput
     * @param randomPicksTo95   the same, expected, in a random order: (n + 1) / (k + 1) for k such programs of n
     */
    public record Ranking(
            String task,
            int programs,
            double pairwiseAccuracy,
            double firstPick,
            double randomPick,
            int picksTo95,
            double randomPicksTo95) {}

    /**
     * How {@code model} ranks the programs of each task of this set (tasks with fewer than 2 programs are left out).
     */
    public List<Ranking> rank(PretrainedModel model) {
        Map<String, List<Program>> byTask = new LinkedHashMap<>();
        for (Program p : programs)
            byTask.computeIfAbsent(p.task(), k -> new ArrayList<>()).add(p);
        List<Ranking> out = new ArrayList<>();
        for (var e : byTask.entrySet()) {
            List<Program> ps = e.getValue();
            if (ps.size() < 2) continue;
            double[] score =
                    ps.stream().mapToDouble(p -> model.raw(p.features())).toArray();
            long right = 0, pairs = 0;
            int first = 0;
            double best = 0, sum = 0;
            for (int i = 0; i < ps.size(); i++) {
                best = Math.max(best, ps.get(i).throughput());
                sum += ps.get(i).throughput();
                if (score[i] > score[first]) first = i;
                for (int j = i + 1; j < ps.size(); j++) {
                    double a = ps.get(i).throughput(), b = ps.get(j).throughput();
                    if (a == b) continue;
                    pairs++;
                    if ((score[i] > score[j]) == (a > b)) right++;
                }
            }
            // a search that measured these programs in the model's order: how many until one is within 95% of the best
            Integer[] order = new Integer[ps.size()];
            for (int i = 0; i < order.length; i++) order[i] = i;
            java.util.Arrays.sort(order, (x, y) -> Double.compare(score[y], score[x]));
            int picks = 0, good = 0;
            for (Program p : ps) if (p.throughput() >= 0.95 * best) good++;
            for (int k = 0; k < order.length; k++) {
                if (ps.get(order[k]).throughput() >= 0.95 * best) {
                    picks = k + 1;
                    break;
                }
            }
            out.add(new Ranking(
                    e.getKey(),
                    ps.size(),
                    pairs == 0 ? Double.NaN : (double) right / pairs,
                    best > 0 ? ps.get(first).throughput() / best : Double.NaN,
                    best > 0 ? sum / ps.size() / best : Double.NaN,
                    picks,
                    (ps.size() + 1.0) / (good + 1.0)));
        }
        return out;
    }

    /** Programs in the set. */
    public int size() {
        return programs.size();
    }

    /** Programs per task (workload key and target, a newline between). */
    public Map<String, Integer> perTask() {
        return Map.copyOf(perTask);
    }

    /** Log records whose workload or target matched no given task. */
    public int unmatched() {
        return unmatched;
    }

    /** Records or programs skipped because they no longer replay or lower. */
    public int unreplayable() {
        return unreplayable;
    }

    /**
     * The set as trees train on it: labels normalised by each task's best throughput, weights at least
     * {@code minWeight}.
     */
    Gbdt.TrainingSet trainingSet(int width, double minWeight) {
        return trainingSet(programs, width, minWeight);
    }

    /** The subset of tasks {@code keep} accepts (by key), as a training set. */
    Gbdt.TrainingSet trainingSet(Predicate<String> keep, int width, double minWeight) {
        return trainingSet(programs.stream().filter(p -> keep.test(p.task())).toList(), width, minWeight);
    }

    List<Program> programs() {
        return List.copyOf(programs);
    }

    static Gbdt.TrainingSet trainingSet(List<Program> ps, int width, double minWeight) {
        if (ps.isEmpty()) throw new KilnException("pretraining set: no programs");
        Map<String, Double> best = new HashMap<>();
        for (Program p : ps) best.merge(p.task(), p.throughput(), Math::max);
        Map<String, Integer> groupIds = new HashMap<>();
        int n = ps.size(), rows = 0;
        for (Program p : ps) rows += p.features().rows();
        float[] x = new float[rows * width];
        int[] start = new int[n + 1], group = new int[n];
        double[] label = new double[n], weight = new double[n];
        for (int q = 0; q < n; q++) {
            Program p = ps.get(q);
            ProgramFeatures f = p.features();
            for (int r = 0; r < f.rows(); r++)
                System.arraycopy(f.values(), r * FeatureLayout.LENGTH, x, (start[q] + r) * width, width);
            start[q + 1] = start[q] + f.rows();
            double b = best.get(p.task());
            label[q] = b > 0 ? p.throughput() / b : 0;
            weight[q] = Math.max(minWeight, label[q]);
            group[q] = groupIds.computeIfAbsent(p.task(), k -> groupIds.size());
        }
        return new Gbdt.TrainingSet(x, width, start, label, weight, group);
    }
}
