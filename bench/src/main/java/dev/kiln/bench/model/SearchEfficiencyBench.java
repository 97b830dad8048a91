package dev.kiln.bench.model;

import dev.kiln.autoschedule.SearchTask;
import dev.kiln.autoschedule.evolution.EvolutionOptions;
import dev.kiln.autoschedule.evolution.EvolutionarySearchPolicy;
import dev.kiln.autoschedule.log.LogRecord;
import dev.kiln.autoschedule.log.TuningLog;
import dev.kiln.autoschedule.measure.MeasureOptions;
import dev.kiln.autoschedule.measure.MeasureResult;
import dev.kiln.autoschedule.measure.Measurer;
import dev.kiln.autoschedule.measure.ProcessMeasurer;
import dev.kiln.autoschedule.model.GbdtCostModel;
import dev.kiln.autoschedule.model.PretrainedModel;
import dev.kiln.autoschedule.model.RandomCostModel;
import dev.kiln.autoschedule.progress.TuneProgress;
import dev.kiln.autoschedule.search.RandomSearchPolicy;
import dev.kiln.autoschedule.search.SearchLimits;
import dev.kiln.autoschedule.search.SearchLoop;
import dev.kiln.autoschedule.search.SearchOutcome;
import dev.kiln.autoschedule.search.SearchPolicy;
import dev.kiln.autoschedule.search.TargetRules;
import dev.kiln.autoschedule.tune.AutoSchedule;
import dev.kiln.bench.network.PretrainedModels;
import dev.kiln.ir.KilnException;
import dev.kiln.schedule.Schedule;
import dev.kiln.target.CpuTarget;
import dev.kiln.target.Target;
import dev.kiln.te.ComputeDAG;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * Search efficiency (issue 6): {@code ./kiln search-bench [options]}. The best GFLOP/s found against
 * the number of trials for one workload ({@link BenchWorkloads}), evolution guided by the learned
 * model against random sampling (and, with {@code --policies learned,ansor-model,random-model},
 * against evolution guided by Ansor's model, {@code GbdtCostModel.ansor}, and by a random
 * model), with the same trial budget, round size (64,
 * Ansor's) and seeds; and the share of wall time spent outside measurement. Programs are measured
 * single-threaded in a child JVM, one fresh measurer per run, 5 repeats; the curves use the
 * fastest repeat of each program (on a shared machine, other processes only add time). At the
 * end, each run's best program after each checkpoint is measured again, in round-robin passes with
 * the others in one measurer ({@link #remeasure}; "re-measured" is the final program's), which
 * removes the selection of one lucky measurement among many: the trials to 95% are read off these
 * too ({@link #reachTable}). The report and each run's tuning log ({@code search-<workload>-<policy>-seed<N>.jsonl})
 * are written to {@code --dir}.
 */
@Command(
        name = "kiln search-bench",
        mixinStandardHelpOptions = true,
        description = "Evolution with the learned cost model against random sampling, same trials and seeds.")
public final class SearchEfficiencyBench implements Callable<Integer> {

    interface PolicyMaker {
        SearchPolicy make(SearchTask task, long seed);
    }

    @Option(
            names = "--workload",
            description = "gemm:N, c2d:0..3, dep:0..3 or softmax:NxM (default: ${DEFAULT-VALUE}).")
    String spec = "gemm:1024";

    @Option(names = "--trials", description = "Trials per run (default: ${DEFAULT-VALUE}).")
    int trials = 256;

    @Option(names = "--seeds", split = ",", description = "Seeds, one run per policy each (default: 1,2,3).")
    long[] seeds = {1, 2, 3};

    @Option(
            names = "--policies",
            split = ",",
            description = "learned, pretrained, ansor-model, random-model, random (random sampling, the baseline of "
                    + "the ratio columns; leave it out to spend the time on the others) (default: learned,random).")
    List<String> wanted = List.of("learned", "random");

    @Option(
            names = "--pretrained",
            split = ",",
            description = "The model of the 'pretrained' policy: a file written by ./kiln pretrain, or 'bundled' "
                    + "(default); several, comma-separated, run one policy each.")
    List<String> pretrained = List.of("bundled");

    @Option(names = "--dir", description = "Where the report goes (default: ${DEFAULT-VALUE}).")
    Path dir = Path.of("kiln-bench", "search");

    public static void main(String[] args) {
        System.exit(new CommandLine(new SearchEfficiencyBench()).execute(args));
    }

    @Override
    public Integer call() throws IOException {
        BenchWorkloads.Workload w = BenchWorkloads.of(spec);
        ComputeDAG dag = w.dag();
        CpuTarget target = Target.cpu().withCores(1);
        SearchTask task = AutoSchedule.task(dag, target);
        Map<String, PolicyMaker> policies = new LinkedHashMap<>();
        if (wanted.contains("learned")) policies.put("evolution + learned model", EvolutionarySearchPolicy::cpu);
        if (wanted.contains("pretrained")) {
            for (String name : pretrained) {
                PretrainedModel pm = PretrainedModels.named(name);
                if (inTrainingSet(pm, task)) {
                    System.out.println("note: " + spec + " is in the training set of pretrained model " + name
                            + " (as this computation, perhaps with other weight layouts); it is not held out");
                }
                policies.put(
                        pretrained.size() == 1
                                ? "evolution + pretrained model"
                                : "evolution + pretrained model "
                                        + Path.of(name).getFileName(),
                        (t, s) -> EvolutionarySearchPolicy.forTask(
                                t, GbdtCostModel.defaults(s).withPretrained(pm), s));
            }
        }
        for (String p : wanted) {
            if (!List.of("learned", "pretrained", "ansor-model", "random-model", "random")
                    .contains(p)) {
                throw new KilnException("--policies: unknown policy '" + p
                        + "' (learned, pretrained, ansor-model, random-model, random)");
            }
        }
        if (wanted.contains("random")) policies.put("random sampling", RandomSearchPolicy::cpu);
        if (wanted.contains("ansor-model")) {
            policies.put(
                    "evolution + Ansor's model",
                    (t, s) -> new EvolutionarySearchPolicy(
                            t, TargetRules.cpu().sketches(t), GbdtCostModel.ansor(s), EvolutionOptions.defaults(), s));
        }
        if (wanted.contains("random-model")) {
            policies.put(
                    "evolution + random model",
                    (t, s) -> new EvolutionarySearchPolicy(
                            t, TargetRules.cpu().sketches(t), new RandomCostModel(s), EvolutionOptions.defaults(), s));
        }
        int[] checkpoints = {64, 100, 128, 192, 256, 384, 512, 768, 1000};
        int[] marks = marks(checkpoints, trials);
        MeasureOptions options = MeasuredPrograms.OPTIONS.withRepeats(5);
        List<String> runs = new ArrayList<>();
        List<Long> runSeeds = new ArrayList<>();
        List<LogRecord[]> bestAtMarks = new ArrayList<>();
        StringBuilder out = new StringBuilder(String.format(
                Locale.ROOT,
                "%s (%.1f MFLOP), %d trials, 64 per round, seeds %s, target %s%nload average before: %s%n",
                w.name(),
                dag.flopCount() / 1e6,
                trials,
                Arrays.toString(seeds),
                target,
                CostModelBench.load()));
        StringBuilder head = new StringBuilder("| policy | seed |");
        StringBuilder rule = new StringBuilder("|---|---|");
        for (int c : checkpoints) {
            if (c > trials) continue;
            head.append(" best @").append(c).append(" |");
            rule.append("---|");
        }
        out.append(head)
                .append(" re-measured | wall s | measuring s | outside measurement |\n")
                .append(rule)
                .append("---|---|---|---|\n");
        List<StringBuilder> lines = new ArrayList<>();
        StringBuilder notes = new StringBuilder("\n");
        Map<String, List<double[]>> curves = new LinkedHashMap<>();
        for (long seed : seeds) {
            for (var p : policies.entrySet()) {
                SearchPolicy policy = p.getValue().make(task, seed);
                // Each run's measurements stay in the report folder (a fresh log per run, so nothing resumes).
                Files.createDirectories(dir);
                Path logFile = dir.resolve(String.format(
                        Locale.ROOT,
                        "search-%s-%s-seed%d.jsonl",
                        spec.replace(':', '-'),
                        p.getKey().toLowerCase(Locale.ROOT).replaceAll("[^a-z]+", "-"),
                        seed));
                Files.deleteIfExists(logFile);
                TuningLog log = TuningLog.open(logFile);
                long t0 = System.nanoTime();
                SearchOutcome o;
                try (Measurer m = ProcessMeasurer.start(target, options)) {
                    o = new SearchLoop(
                                    task,
                                    policy,
                                    m,
                                    log,
                                    new SearchLimits(trials, 64, Duration.ZERO, 0),
                                    TuneProgress.none())
                            .run();
                } finally {
                    if (policy instanceof AutoCloseable c) {
                        try {
                            c.close();
                        } catch (Exception e) {
                            throw new IllegalStateException(e);
                        }
                    }
                }
                double wall = (System.nanoTime() - t0) / 1e9;
                String crossovers = policy instanceof EvolutionarySearchPolicy e
                        ? String.format(
                                Locale.ROOT,
                                ", crossovers valid %d of %d",
                                e.stats().validCrossovers,
                                e.stats().crossovers)
                        : "";
                List<LogRecord> rs = log.records();
                log.close();
                double[] best = new double[rs.size()];
                LogRecord[] bestRecords = new LogRecord[rs.size()];
                double b = 0, measuring = 0;
                LogRecord bestRecord = null;
                for (int i = 0; i < rs.size(); i++) {
                    LogRecord r = rs.get(i);
                    if (r.isValid()) {
                        double g = dag.flopCount()
                                / r.costs().stream()
                                        .mapToDouble(Double::doubleValue)
                                        .min()
                                        .orElseThrow()
                                / 1e9;
                        if (g > b) {
                            b = g;
                            bestRecord = r;
                        }
                    }
                    best[i] = b;
                    bestRecords[i] = bestRecord;
                    measuring += r.wallSeconds();
                }
                LogRecord[] atMarks = new LogRecord[marks.length];
                for (int k = 0; k < marks.length; k++)
                    atMarks[k] = rs.isEmpty() ? null : bestRecords[Math.min(marks[k], rs.size()) - 1];
                bestAtMarks.add(atMarks);
                curves.computeIfAbsent(p.getKey(), k -> new ArrayList<>()).add(best);
                StringBuilder line = new StringBuilder(String.format(Locale.ROOT, "| %s | %d |", p.getKey(), seed));
                for (int c : checkpoints) {
                    if (c <= trials)
                        line.append(String.format(Locale.ROOT, " %.1f |", best[Math.min(c, best.length) - 1]));
                }
                line.append(String.format(
                        Locale.ROOT,
                        " %%s | %.0f | %.0f | %.0f%%%% |",
                        wall,
                        measuring,
                        100 * (wall - measuring) / wall));
                System.out.println(
                        line + "   (" + o.trials() + " trials, stopped: " + o.stopReason() + crossovers + ")");
                if (!crossovers.isEmpty())
                    notes.append(p.getKey())
                            .append(", seed ")
                            .append(seed)
                            .append(crossovers)
                            .append('\n');
                lines.add(line);
                runs.add(p.getKey());
                runSeeds.add(seed);
            }
        }
        // Every run's best-so-far program at each mark, re-measured together: the last mark's is the run's result.
        Map<LogRecord, Integer> distinct = new java.util.IdentityHashMap<>();
        List<Schedule> programs = new ArrayList<>();
        for (LogRecord[] atMarks : bestAtMarks) {
            for (LogRecord r : atMarks) {
                if (r != null && !distinct.containsKey(r)) {
                    distinct.put(r, programs.size());
                    programs.add(r.schedule(dag));
                }
            }
        }
        double[] measuredAgain = remeasure(task, target, options, programs, dag.flopCount());
        double[][] againAtMarks = new double[bestAtMarks.size()][marks.length];
        double[] again = new double[bestAtMarks.size()];
        for (int i = 0; i < bestAtMarks.size(); i++) {
            for (int k = 0; k < marks.length; k++) {
                LogRecord r = bestAtMarks.get(i)[k];
                againAtMarks[i][k] = r == null ? 0 : measuredAgain[distinct.get(r)];
            }
            again[i] = againAtMarks[i][marks.length - 1];
        }
        Map<String, List<Double>> againByPolicy = new LinkedHashMap<>();
        for (int i = 0; i < lines.size(); i++) {
            out.append(String.format(
                            Locale.ROOT, lines.get(i).toString(), String.format(Locale.ROOT, "%.1f", again[i])))
                    .append('\n');
            againByPolicy.computeIfAbsent(runs.get(i), k -> new ArrayList<>()).add(again[i]);
        }
        out.append("\nMean over seeds of best " + dag.rateUnit()
                        + (curves.containsKey("random sampling")
                                ? ", and the ratio to random sampling at the same trial count:\n\n"
                                : ":\n\n"))
                .append(head)
                .append(" re-measured |\n")
                .append(rule)
                .append("---|\n");
        double[] random = curves.containsKey("random sampling") ? mean(curves.get("random sampling")) : null;
        double randomAgain = againByPolicy.getOrDefault("random sampling", List.of()).stream()
                .mapToDouble(Double::doubleValue)
                .average()
                .orElse(0);
        for (var e : curves.entrySet()) {
            double[] m = mean(e.getValue());
            StringBuilder line = new StringBuilder("| " + e.getKey() + " | mean |");
            for (int c : checkpoints) {
                if (c > trials) continue;
                int i = Math.min(c, m.length) - 1;
                line.append(
                        random == null
                                ? String.format(Locale.ROOT, " %.1f |", m[i])
                                : String.format(
                                        Locale.ROOT,
                                        " %.1f (%.2fx) |",
                                        m[i],
                                        m[i] / random[Math.min(i, random.length - 1)]));
            }
            double a = againByPolicy.get(e.getKey()).stream()
                    .mapToDouble(Double::doubleValue)
                    .average()
                    .orElse(0);
            line.append(
                    random == null
                            ? String.format(Locale.ROOT, " %.1f |", a)
                            : String.format(Locale.ROOT, " %.1f (%.2fx) |", a, a / randomAgain));
            out.append(line).append('\n');
        }
        List<double[]> reference = curves.get("evolution + learned model");
        if (reference != null) {
            double[] m = mean(reference);
            double goal = 0.95 * m[m.length - 1];
            out.append(String.format(
                    Locale.ROOT,
                    "%nTrials to reach 95%% of the default search's mean final result (%.1f " + dag.rateUnit() + "), "
                            + "mean over seeds (runs that never reach it count as %d):%n%n",
                    goal,
                    trials));
            for (var e : curves.entrySet()) {
                double sum = 0;
                for (double[] c : e.getValue()) sum += trialsToReach(c, goal, trials);
                out.append(String.format(
                        Locale.ROOT,
                        "- %s: %.0f%n",
                        e.getKey(),
                        sum / e.getValue().size()));
            }
        }
        out.append(reachTable(runs, runSeeds, marks, againAtMarks, "evolution + learned model"));
        out.append(notes);
        out.append("load average after: ").append(CostModelBench.load()).append('\n');
        System.out.print(out);
        Files.createDirectories(dir);
        Files.writeString(dir.resolve("search-efficiency-" + spec.replace(':', '-') + ".txt"), out);
        return 0;
    }

    /** Round-robin passes of {@link #remeasure}. */
    static final int REMEASURE_PASSES = 5;

    /**
     * GFLOP/s of each schedule (0 for none): the fastest of {@link #REMEASURE_PASSES} round-robin passes in one
     * measurer. On a shared host other work only adds time, and a slow stretch of it lands on some programs of a
     * pass and not others; every program gets the same passes, so taking each one's fastest favours none.
     */
    static double[] remeasure(
            SearchTask task, CpuTarget target, MeasureOptions options, List<Schedule> schedules, long flops) {
        double[] out = new double[schedules.size()];
        try (Measurer m = ProcessMeasurer.start(target, options)) {
            for (int pass = 0; pass < REMEASURE_PASSES; pass++) {
                for (int i = 0; i < schedules.size(); i++) {
                    if (schedules.get(i) == null) continue;
                    MeasureResult r = m.measure(task, schedules.get(i));
                    if (r.ok())
                        out[i] = Math.max(
                                out[i],
                                flops / Arrays.stream(r.costsSeconds()).min().orElseThrow() / 1e9);
                }
            }
        }
        return out;
    }

    /**
     * Whether the model was trained on this computation: its workload key without the layout-free suffix
     * (the suite tunes convs with {@code layout_free=[1]}, search-bench with the weights as given).
     */
    static boolean inTrainingSet(PretrainedModel pm, SearchTask task) {
        String base = computation(task.workloadKey());
        return pm.tasks().stream().anyMatch(k -> computation(k).equals(base));
    }

    private static String computation(String workloadKey) {
        int space = workloadKey.indexOf(' ');
        return space < 0 ? workloadKey : workloadKey.substring(0, space);
    }

    /** The checkpoints within {@code trials}, and {@code trials} itself as the last (the run's result). */
    static int[] marks(int[] checkpoints, int trials) {
        int[] within = Arrays.stream(checkpoints).filter(c -> c < trials).toArray();
        int[] out = Arrays.copyOf(within, within.length + 1);
        out[within.length] = trials;
        return out;
    }

    /**
     * The first mark at which a run's best-so-far program, re-measured, reaches {@code share} of its
     * last mark's program re-measured ({@code again[k]}: the re-measured rate of the best program
     * after {@code marks[k]} trials); {@code -1} when the last has no valid program.
     */
    static int firstMarkReaching(int[] marks, double[] again, double share) {
        double last = again[again.length - 1];
        return last > 0 ? firstMarkAtOrAbove(marks, again, share * last) : -1;
    }

    /**
     * The trials-to-95% question answered on re-measured programs: a best-so-far curve is the running
     * maximum of single noisy measurements, so late in a run it is biased upwards (more chances to
     * catch a lucky timing) and "95% of the 1000-trial best" asks for more than 95% of the final
     * program's speed. Here each run's best program at each mark is measured again alongside all the
     * others and compared with two references: the run's own final program measured the same way
     * (a run that stalls early reaches its own final early), and the mean re-measured final program
     * of the {@code reference} policy's runs (the same bar for every run; none when no run is that policy's).
     */
    static String reachTable(
            List<String> runs, List<Long> seeds, int[] marks, double[][] againAtMarks, String reference) {
        double bar = 0;
        int refs = 0;
        for (int i = 0; i < runs.size(); i++) {
            if (runs.get(i).equals(reference)) {
                bar += againAtMarks[i][marks.length - 1];
                refs++;
            }
        }
        bar = refs == 0 ? 0 : 0.95 * bar / refs;
        StringBuilder t = new StringBuilder(String.format(
                Locale.ROOT,
                "%nEach run's best program after N trials, re-measured (the fastest of " + REMEASURE_PASSES
                        + " round-robin passes in one measurer), as a share of its own %d-trial program re-measured "
                        + "the same way; trials to 95%% of that, and to %s:%n%n"
                        + "| policy | seed |",
                marks[marks.length - 1],
                bar > 0
                        ? String.format(
                                Locale.ROOT, "%.1f, 95%% of the mean re-measured final program of '%s'", bar, reference)
                        : "a common bar (none: no run of '" + reference + "')"));
        StringBuilder rule = new StringBuilder("|---|---|");
        for (int m : marks) {
            t.append(" @").append(m).append(" |");
            rule.append("---|");
        }
        t.append(" trials to 95% of own | trials to the common bar |\n")
                .append(rule)
                .append("---|---|\n");
        Map<String, List<Integer>> reach = new LinkedHashMap<>(), reachBar = new LinkedHashMap<>();
        Map<String, double[]> shareSums = new LinkedHashMap<>(), rateSums = new LinkedHashMap<>();
        for (int i = 0; i < runs.size(); i++) {
            double[] a = againAtMarks[i];
            double[] rates = rateSums.computeIfAbsent(runs.get(i), k -> new double[marks.length]);
            for (int k = 0; k < marks.length; k++) rates[k] += a[k];
            double last = a[a.length - 1];
            t.append("| ")
                    .append(runs.get(i))
                    .append(" | ")
                    .append(seeds.get(i))
                    .append(" |");
            double[] sums = shareSums.computeIfAbsent(runs.get(i), k -> new double[marks.length + 1]);
            for (int k = 0; k < marks.length; k++) {
                double share = last > 0 ? a[k] / last : 0;
                sums[k] += share;
                t.append(String.format(Locale.ROOT, " %.3f (%.1f) |", share, a[k]));
            }
            sums[marks.length]++;
            int r = firstMarkReaching(marks, a, 0.95);
            reach.computeIfAbsent(runs.get(i), k -> new ArrayList<>()).add(r);
            int rb = bar > 0 ? firstMarkAtOrAbove(marks, a, bar) : -1;
            reachBar.computeIfAbsent(runs.get(i), k -> new ArrayList<>()).add(rb);
            t.append(' ')
                    .append(r < 0 ? "-" : Integer.toString(r))
                    .append(" | ")
                    .append(bar <= 0 ? "-" : rb < 0 ? "not reached" : Integer.toString(rb))
                    .append(" |\n");
        }
        for (var e : shareSums.entrySet()) {
            double[] sums = e.getValue();
            t.append("| ").append(e.getKey()).append(" | mean |");
            for (int k = 0; k < marks.length; k++)
                t.append(String.format(Locale.ROOT, " %.3f |", sums[k] / sums[marks.length]));
            t.append(' ')
                    .append(by100(reach.get(e.getKey())))
                    .append(" | ")
                    .append(bar > 0 ? by100(reachBar.get(e.getKey())) : "-")
                    .append(" |\n");
        }
        if (bar > 0) {
            // the mean speed of the policy's programs at each mark against the reference's mean final program
            t.append("\nMean re-measured rate of the best program after N trials, and its share of the mean final "
                            + "program of '")
                    .append(reference)
                    .append("':\n\n| policy |");
            for (int m : marks) t.append(" @").append(m).append(" |");
            t.append('\n').append(rule, 0, rule.length() - 4).append('\n');
            for (var e : rateSums.entrySet()) {
                double n = shareSums.get(e.getKey())[marks.length];
                t.append("| ").append(e.getKey()).append(" |");
                for (double sum : e.getValue())
                    t.append(String.format(Locale.ROOT, " %.1f (%.3f) |", sum / n, sum / n / (bar / 0.95)));
                t.append('\n');
            }
        }
        return t.toString();
    }

    private static String by100(List<Integer> reached) {
        long n = reached.stream().filter(x -> x >= 0 && x <= 100).count();
        return n + " of " + reached.size() + " runs by 100";
    }

    /** The first mark whose re-measured rate is at least {@code bar}; {@code -1} if none. */
    static int firstMarkAtOrAbove(int[] marks, double[] again, double bar) {
        for (int k = 0; k < marks.length; k++) if (again[k] >= bar) return marks[k];
        return -1;
    }

    /** The first trial (1-based) whose best-so-far reaches {@code goal}; {@code none} if none does. */
    static int trialsToReach(double[] bestSoFar, double goal, int none) {
        for (int i = 0; i < bestSoFar.length; i++) if (bestSoFar[i] >= goal) return i + 1;
        return none;
    }

    static double[] mean(List<double[]> curves) {
        int n = curves.stream().mapToInt(c -> c.length).min().orElse(0);
        double[] m = new double[n];
        for (double[] c : curves) for (int i = 0; i < n; i++) m[i] += c[i] / curves.size();
        return m;
    }
}
