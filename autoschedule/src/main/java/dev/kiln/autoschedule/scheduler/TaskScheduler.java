package dev.kiln.autoschedule.scheduler;

import dev.kiln.autoschedule.SearchTask;
import dev.kiln.autoschedule.log.TuningLog;
import dev.kiln.autoschedule.measure.Measurer;
import dev.kiln.autoschedule.model.CostModel;
import dev.kiln.autoschedule.search.SearchOutcome;
import dev.kiln.autoschedule.search.SearchPolicy;
import dev.kiln.autoschedule.search.StopReason;
import dev.kiln.autoschedule.transfer.TransferPolicy;
import dev.kiln.autoschedule.transfer.TransferSeeds;
import dev.kiln.ir.KilnException;
import dev.kiln.target.Target;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.Supplier;

/**
 * Tunes the tasks of a network together (Ansor's task scheduler, notes §9): a trial budget is
 * spread over the tasks, round by round, so that the estimated end-to-end latency (the
 * {@link Objective}, by default the sum of weight x best latency) drops fastest.
 *
 * <pre>{@code
 * List<TuningTask> tasks = ...;   // each: SearchTask, weight, similarity tag, description
 * TaskScheduler ts = new TaskScheduler(tasks, TaskSchedulerOptions.builder().strategy(Strategy.GRADIENT)
 *         .trials(2000).measuresPerRound(64).seed(1).logFile(path).build());
 * SchedulerResult r = ts.tune();
 * }</pre>
 *
 * <p>Every task gets its own search policy (by default an {@link
 * dev.kiln.autoschedule.evolution.EvolutionarySearchPolicy} with <b>its own cost model</b>; with
 * {@code sharedCostModel} one {@code GbdtCostModel} learns from every task's measurements, as
 * Ansor's single XGBoost model does) and its own per-round
 * {@link dev.kiln.autoschedule.search.SearchLoop} over the one shared {@link TuningLog}. The
 * choice of the next task is the {@link SchedulerLoop}'s: a round-robin warm-up, then the gradient
 * strategy (or round robin). Eps-greedy task choice (the paper's Algorithm 1) is available but
 * off by default, as in Ansor's code.
 *
 * <p>Resume: with a log file, every task restores its records first (its trials count against the
 * budget and are never measured again; a task with a valid logged program skips the warm-up), so
 * a second {@link #tune()} with the same budget measures nothing. Robustness: a bad program is a
 * failed trial (the measurer records crashes, time-outs and wrong results); a task whose policy or
 * measurer cannot be made, or whose round throws, is dead and reported; a task whose every program
 * fails is dead after its warm-up; the other tasks go on.
 *
 * <p>Before the results are reported, every task's fastest programs are re-measured
 * ({@link dev.kiln.autoschedule.search.SearchLoop#remeasure()}, as the measure options say),
 * after the trial and time budgets: this adds up to {@code remeasureTop x remeasureRounds}
 * measurements per task.
 *
 * <p>With {@code transfer} on, a task's first batch is led by the fastest programs so far of its similar tasks
 * (same {@link SearchTask#structureKey()}), adapted to it ({@link TransferPolicy}); they are marked in the log.
 *
 * <p>Each task's policy is seeded from the scheduler's seed and the task's position, so a run is
 * reproducible from (tasks, options, log).
 */
public final class TaskScheduler {
    private final List<TuningTask> tasks;
    private final TaskSchedulerOptions options;

    /** A scheduler over {@code tasks} (distinct workloads, or distinct targets) with {@code options}. */
    public TaskScheduler(List<TuningTask> tasks, TaskSchedulerOptions options) {
        this.tasks = List.copyOf(Objects.requireNonNull(tasks, "tasks"));
        this.options = Objects.requireNonNull(options, "options");
        if (this.tasks.isEmpty()) throw new KilnException("the task scheduler needs at least one task");
        Map<String, Integer> seen = new HashMap<>();
        for (int i = 0; i < this.tasks.size(); i++) {
            TuningTask t = this.tasks.get(i);
            Integer j =
                    seen.putIfAbsent(t.task().workloadKey() + '\n' + t.task().targetDescription(), i);
            if (j != null) {
                throw new KilnException("tasks " + j + " ('" + this.tasks.get(j).description() + "') and " + i + " ('"
                        + t.description() + "') are the same workload "
                        + t.task().workloadKey() + " on target '"
                        + t.task().targetDescription() + "'; give it once with the sum of their weights");
            }
        }
    }

    /** The tasks, in order. */
    public List<TuningTask> tasks() {
        return tasks;
    }

    /** The options. */
    public TaskSchedulerOptions options() {
        return options;
    }

    /**
     * Runs the scheduler's loop ({@link SchedulerLoop}: warm-up, then the strategy's choice of rounds) over tasks
     * that measure themselves, with {@code options}' budget, strategy, seed and {@code overlapRounds}; the options'
     * log, policies and measurers are not used. For simulations (the cluster bench's simulated network) and tests.
     */
    public static SchedulerTrace schedule(List<? extends SchedulableTask> tasks, TaskSchedulerOptions options) {
        return new SchedulerLoop(tasks, options).run();
    }

    /** The seed of task {@code index}'s search policy. */
    public static long taskSeed(long seed, int index) {
        return seed + 0x9E3779B97F4A7C15L * (index + 1);
    }

    /** Tunes the tasks until the budget is spent, every task is dead, or early stopping (see the class comment). */
    public SchedulerResult tune() {
        Map<String, Measurer> made = new LinkedHashMap<>();
        List<SearchTaskRunner> runners = new ArrayList<>();
        try (TuningLog log = options.log().map(TuningLog::open).orElseGet(TuningLog::inMemory)) {
            if (!log.skippedLines().isEmpty()) {
                System.getLogger(TaskScheduler.class.getName())
                        .log(
                                System.Logger.Level.WARNING,
                                "task scheduler: " + log.skippedLines().size()
                                        + " line(s) of the log could not be read (first: line "
                                        + log.skippedLines().getFirst().line() + ", "
                                        + log.skippedLines().getFirst().reason() + ")");
            }
            CostModel shared = options.sharedCostModel() ? options.sharedModel().create(options.seed()) : null;
            List<String> structureKeys = options.transfer()
                    ? tasks.stream().map(t -> t.task().structureKey()).toList()
                    : List.of();
            for (int i = 0; i < tasks.size(); i++) {
                TuningTask t = tasks.get(i);
                long seed = taskSeed(options.seed(), i);
                Supplier<SearchPolicy> policy = shared != null
                        ? () -> options.sharedModelPolicies().create(t.task(), shared, seed)
                        : () -> options.policies().create(t.task(), seed);
                if (options.transfer()) policy = transferring(policy, i, structureKeys, log);
                runners.add(new SearchTaskRunner(t, policy, task -> measurer(task, made), log));
            }
            SchedulerTrace trace = new SchedulerLoop(runners, options)
                    .beforeFirstRound(() -> prepareWorkloads(made))
                    .run();
            runners.forEach(SearchTaskRunner::remeasure);
            List<TaskResult> results = new ArrayList<>();
            for (int i = 0; i < tasks.size(); i++) {
                SearchTaskRunner r = runners.get(i);
                SearchOutcome o = r.outcome(StopReason.TRIAL_BUDGET).orElse(null);
                results.add(new TaskResult(
                        tasks.get(i),
                        trace.tasks().get(i),
                        r.best(),
                        o == null ? 0 : o.restoredTrials(),
                        o == null ? 0 : o.errors(),
                        o == null ? Map.of() : o.errorsByKind(),
                        o == null ? Map.of() : o.firstErrors()));
            }
            return new SchedulerResult(results, trace);
        } finally {
            runners.forEach(SearchTaskRunner::close);
            made.values().forEach(Measurer::close);
        }
    }

    /**
     * A similar task's program is transferred into a later batch when its throughput beats the task's best by more
     * than this factor.
     */
    static final double LATE_TRANSFER_MARGIN = 1.1;

    /** The late transfer, off with {@code -Dkiln.lateTransfer=false} (for A/B runs). */
    static boolean lateTransfer() {
        return !"false".equals(System.getProperty("kiln.lateTransfer"));
    }

    /**
     * The task's policy led, in its first batch, by programs of its similar tasks (same structural key) measured
     * so far in the shared log ({@link TransferSeeds#of}), and in each later one by those that have come to run
     * faster than its own best ({@link TransferSeeds#better}).
     */
    private Supplier<SearchPolicy> transferring(
            Supplier<SearchPolicy> policy, int index, List<String> structureKeys, TuningLog log) {
        TuningTask t = tasks.get(index);
        List<SearchTask> similar = new ArrayList<>();
        for (int j = 0; j < tasks.size(); j++) {
            if (j != index && structureKeys.get(j).equals(structureKeys.get(index)))
                similar.add(tasks.get(j).task());
        }
        if (similar.isEmpty()) return policy;
        return () -> {
            Set<String> seen = new HashSet<>();
            return new TransferPolicy(
                    policy.get(),
                    () -> TransferSeeds.of(t.task(), similar, log, options.transferPrograms()),
                    k -> lateTransfer()
                            ? TransferSeeds.better(t.task(), similar, log, seen, k, LATE_TRANSFER_MARGIN)
                            : List.of(),
                    t.description());
        };
    }

    /**
     * Has each measurer make its tasks' workloads (the interpreter's references) before the first round, on every
     * core ({@link Measurer#prepare}): otherwise each task's first round waits for its reference on one core. A task
     * whose measurer cannot be made is skipped here; its runner reports that when the task is first measured.
     */
    private void prepareWorkloads(Map<String, Measurer> made) {
        Map<Measurer, List<SearchTask>> byMeasurer = new LinkedHashMap<>();
        for (TuningTask t : tasks) {
            try {
                byMeasurer
                        .computeIfAbsent(measurer(t, made), m -> new ArrayList<>())
                        .add(t.task());
            } catch (KilnException e) {
                // reported by the task's runner
            }
        }
        int threads = Runtime.getRuntime().availableProcessors();
        byMeasurer.forEach((m, ts) -> m.prepare(ts, threads));
    }

    /** The measurer of a task: the options' one, or one per target string made with the factory. */
    private Measurer measurer(TuningTask t, Map<String, Measurer> made) {
        if (options.measurer() != null) return options.measurer();
        String target = t.task().targetDescription();
        Measurer m = made.get(target);
        if (m != null) return m;
        Target parsed;
        try {
            parsed = Target.parse(target);
        } catch (KilnException e) {
            throw new KilnException(
                    "task '" + t.description() + "': its target '" + target + "' is not a target string ("
                            + e.getMessage() + "), so no measurer can be made for it; give the scheduler a measurer");
        }
        m = options.measurers().create(parsed, options.measureOptions().forTarget(parsed));
        made.put(target, m);
        return m;
    }
}
