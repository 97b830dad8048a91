package dev.kiln.autoschedule.scheduler;

import dev.kiln.ir.KilnException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.SplittableRandom;
import java.util.function.LongSupplier;

/**
 * Ansor's task scheduler (notes §9) over {@link SchedulableTask}s: it spreads a trial budget over
 * the tasks of a network so that the objective (by default the sum of weight x best latency)
 * drops fastest. {@link TaskScheduler} runs it over real search tasks; tests run it over
 * synthetic ones.
 *
 * <ol>
 * <li>{@code per_round = min(measuresPerRound, trials / #tasks)}; a budget too small for one round
 *     per task is an error.</li>
 * <li>Restore: each task restores its log records. Its round count is estimated as Ansor does,
 *     {@code t_i = round(trials_i / per_round)} (at least 1), and its best round likewise; its
 *     cost history, one entry per round, is the best after {@code min(k x per_round, trials_i)}
 *     trials (Ansor keeps only the last best here, which leaves the backward gradient undefined for
 *     restored tasks). A restored task already past per-task early stopping is dead.</li>
 * <li>Warm-up: one round per task, in order; a task restored with a valid program skips it. Then
 *     every task without a valid program is dead ({@link TaskStatus#NO_VALID_PROGRAM}).</li>
 * <li>While trials remain and a task lives: choose a task, give it a round of
 *     {@code min(per_round, trials left)} programs, adjust its similarity group, check global
 *     early stopping (the objective has not improved in {@code earlyStopping} trials and every task
 *     has a valid program).</li>
 * </ol>
 *
 * <p>The gradient choice, for every live task i with best latency {@code g_i} after {@code t_i}
 * rounds and history {@code h_i}:
 * <pre>
 *   chain    = (f(g) - f(g - delta e_i)) / delta,  delta = 1e-4 (seconds)
 *   backward = (h_i[t_i - 1] - h_i[t_i - 1 - w]) / w  if that entry exists, else 0  (w = backwardWindow, 3)
 *   g_next_1 = g_i - g_i / t_i
 *   g_next_2 = beta x flops_i / max_{j in group(i)} (flops_j / g_j)  if i's similarity group has
 *              more than one task, else beta x 1e30
 *   forward  = min(g_next_1, g_next_2) - g_i
 *   grad_i   = chain x (alpha x backward + (1 - alpha) x forward)
 * </pre>
 * and the task with the smallest (most negative) gradient gets the round; the first of them when
 * several tie, and a uniformly random live task (from the seeded generator) when all live tasks'
 * gradients are equal. Ansor compares the dead tasks' zero gradients too and can then pick a dead
 * task; here only live tasks compete. A positive gradient (an objective that decreases when a
 * latency grows) throws. With {@code taskEpsGreedy > 0}, each choice is first a uniformly random
 * live task with that probability (the paper's Algorithm 1; Ansor's code has no such step, and
 * it is off by default). A task without a valid program counts as {@link #NO_LATENCY} seconds in
 * the objective, as in Ansor.
 *
 * <p>After each round of task i: {@code t_i += 1}; if its best improved, its best round is
 * {@code t_i}; it is dead if the round measured nothing ({@link TaskStatus#SEARCH_SPACE_EXHAUSTED})
 * or if {@code (t_i - best round) x per_round > perTaskEarlyStopping} (when that is on). Similarity
 * group adjustment: task i leaves its group when its throughput is below the group's best over
 * beta and {@code t_i > 5 + max} rounds of the other members.
 *
 * <p>When rounds overlap ({@link TaskSchedulerOptions#overlapRounds()}: {@link RoundOverlap#ALWAYS}, or the default
 * {@link RoundOverlap#WHEN_ASYNCHRONOUS} when every task that restored without failing is
 * {@link SchedulableTask#asynchronous()}, that is measures on a cluster) the scheduler keeps two rounds in flight: it
 * starts a round ({@link SchedulableTask#startRound}: the programs are chosen and handed to the
 * measurer), then chooses and starts the next one, of another task, from what it knows at that
 * point, and only then waits for the older round and applies it ({@link StartedRound#finish}).
 * So a measurer with its own workers has the next round's programs queued while the last
 * programs of a round measure, and the tuner's search for the next round overlaps the
 * measurements. Rounds are applied in the order they started (so a run stays reproducible from
 * its inputs); a task has at most one round in flight, so a round never draws a program that
 * another round of its task is measuring; each round's trials are reserved from the budget when
 * it starts; the warm-up is applied in full before tasks without a valid program are declared
 * dead; after the budget, the time budget or early stopping, the rounds still in flight are
 * applied. Without it (the default with a synchronous measurer, such as the local child JVM)
 * each round is measured and applied before the next is chosen.
 *
 * <p>A task whose round throws is dead ({@link TaskStatus#FAILED}, with the message); the others
 * go on. (Bad programs never throw: measurers record them as failed trials.)
 */
final class SchedulerLoop {
    private static final System.Logger LOG = System.getLogger(SchedulerLoop.class.getName());

    /** The latency of a task without a valid program in the objective (Ansor's 1e10 seconds). */
    public static final double NO_LATENCY = 1e10;
    /** The step of the finite difference for the chain rule (seconds). */
    public static final double DELTA = 1e-4;

    private final List<? extends SchedulableTask> tasks;
    private final TaskSchedulerOptions options;
    private final LongSupplier nanoTime;
    private final SplittableRandom rng;
    private final int n;
    private final double[] weights, cost;
    private final long[] flops;
    private final int[] rounds, bestRound, trials;
    private final List<List<Double>> history = new ArrayList<>();
    private final TaskStatus[] status;
    private final String[] message;
    private final SimilarityGroups groups;
    private final List<Integer> order = new ArrayList<>();
    private final List<ObjectivePoint> points = new ArrayList<>();
    private final boolean[] busy;
    private final java.util.ArrayDeque<InFlight> inFlight = new java.util.ArrayDeque<>();
    private int depth = 1;
    private int perRound, ct, restoredTrials, reserved;
    private long start;
    private Writer tsv;
    private boolean ran;
    private Runnable beforeFirstRound = () -> {};

    /** A scheduler over {@code tasks} timed by {@link System#nanoTime()}. */
    public SchedulerLoop(List<? extends SchedulableTask> tasks, TaskSchedulerOptions options) {
        this(tasks, options, System::nanoTime);
    }

    /** A scheduler whose elapsed times are read from {@code nanoTime} (a fake clock in tests). */
    public SchedulerLoop(List<? extends SchedulableTask> tasks, TaskSchedulerOptions options, LongSupplier nanoTime) {
        this.tasks = List.copyOf(Objects.requireNonNull(tasks, "tasks"));
        this.options = Objects.requireNonNull(options, "options");
        this.nanoTime = Objects.requireNonNull(nanoTime, "nanoTime");
        if (this.tasks.isEmpty()) throw new KilnException("the task scheduler needs at least one task");
        n = this.tasks.size();
        weights = new double[n];
        flops = new long[n];
        List<String> tags = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            SchedulableTask t = this.tasks.get(i);
            weights[i] = t.weight();
            if (!(weights[i] > 0) || Double.isInfinite(weights[i])) {
                throw new KilnException(
                        "task " + i + " (" + t.name() + "): the weight must be positive and finite, got " + weights[i]);
            }
            flops[i] = t.flops();
            if (flops[i] < 0) throw new KilnException("task " + i + " (" + t.name() + "): negative FLOPs " + flops[i]);
            tags.add(Objects.requireNonNull(t.tag(), "tag of task " + i));
            history.add(new ArrayList<>());
        }
        cost = new double[n];
        Arrays.fill(cost, NO_LATENCY);
        rounds = new int[n];
        bestRound = new int[n];
        trials = new int[n];
        status = new TaskStatus[n];
        Arrays.fill(status, TaskStatus.ALIVE);
        message = new String[n];
        Arrays.fill(message, "");
        groups = new SimilarityGroups(tags, flops);
        rng = new SplittableRandom(options.seed());
        busy = new boolean[n];
    }

    /**
     * Work to run once when {@link #run} starts, inside the time budget, before the first round ({@link TaskScheduler}:
     * every task's reference computed up front, in parallel, by {@code Measurer.prepare}).
     */
    public SchedulerLoop beforeFirstRound(Runnable work) {
        this.beforeFirstRound = Objects.requireNonNull(work, "work");
        return this;
    }

    /** Runs the scheduler until the budget is spent, every task is dead, or global early stopping. Runs once. */
    public SchedulerTrace run() {
        if (ran) throw new IllegalStateException("a SchedulerLoop runs once");
        ran = true;
        perRound = Math.min(options.measuresPerRound(), options.trials() / n);
        if (perRound <= 0) {
            throw new KilnException("task scheduler: a trial budget of " + options.trials()
                    + " is less than one trial per task (" + n + " tasks); give at least " + n + " trials");
        }
        start = nanoTime.getAsLong();
        try {
            beforeFirstRound.run();
            openTsv();
            return schedule();
        } finally {
            closeTsv();
        }
    }

    private SchedulerTrace schedule() {
        boolean[] restored = new boolean[n];
        for (int i = 0; i < n; i++) restored[i] = restore(i);
        restoredTrials = ct;
        if (ct > 0) point(-1);
        depth = options.overlapRounds().overlaps(allAsynchronous()) ? 2 : 1;

        // Warm-up: one round per task, round robin; tasks restored with a valid program skip it.
        for (int i = 0; i < n; i++) {
            if (restored[i] || status[i] != TaskStatus.ALIVE) continue;
            while (inFlight.size() >= depth) end(inFlight.getFirst());
            if (ct + reserved >= options.trials()) break;
            begin(i);
        }
        while (!inFlight.isEmpty()) end(inFlight.getFirst());
        int bestCt = ct;
        double bestScore = score();
        for (int i = 0; i < n; i++) {
            if (cost[i] >= NO_LATENCY && status[i] != TaskStatus.FAILED) {
                status[i] = TaskStatus.NO_VALID_PROGRAM;
                message[i] = "no valid program in " + trials[i] + " trial(s)";
            }
        }

        SchedulerStop stop = SchedulerStop.TRIAL_BUDGET;
        int rr = -1;
        while (true) {
            if (inFlight.size() >= depth
                    || (!inFlight.isEmpty() && (ct + reserved >= options.trials() || !anyStartable()))) {
                int i = end(inFlight.getFirst());
                adjustSimilarityGroup(i);
                double s = score();
                if (s < bestScore) {
                    bestScore = s;
                    bestCt = ct;
                } else if (options.earlyStopping() > 0 && ct - bestCt >= options.earlyStopping() && allHaveLatency()) {
                    stop = SchedulerStop.EARLY_STOPPING;
                    LOG.log(
                            System.Logger.Level.INFO,
                            "task scheduler: stopping early, the objective has not improved in {0} trials",
                            ct - bestCt);
                    break;
                }
                continue;
            }
            if (ct + reserved >= options.trials()) break;
            if (!options.timeBudget().isZero()
                    && nanoTime.getAsLong() - start >= options.timeBudget().toNanos()) {
                stop = SchedulerStop.TIME_BUDGET;
                break;
            }
            if (!anyAlive()) {
                stop = SchedulerStop.ALL_TASKS_DEAD;
                break;
            }
            int i;
            if (options.strategy() == Strategy.ROUND_ROBIN) {
                do rr = (rr + 1) % n;
                while (status[rr].dead() || busy[rr]);
                i = rr;
            } else {
                i = chooseByGradient();
            }
            begin(i);
        }
        // Rounds already handed out are measured: apply them (they were within the budget when started).
        while (!inFlight.isEmpty()) adjustSimilarityGroup(end(inFlight.getFirst()));
        if (ct >= options.trials() && stop == SchedulerStop.TRIAL_BUDGET && !anyAlive())
            stop = SchedulerStop.ALL_TASKS_DEAD;
        return new SchedulerTrace(
                summaries(), order, points, perRound, ct, restoredTrials, objective(), stop, elapsed(), depth > 1);
    }

    /** Whether every task that restored without failing measures asynchronously (and at least one did restore). */
    private boolean allAsynchronous() {
        boolean any = false;
        for (int i = 0; i < n; i++) {
            if (status[i] == TaskStatus.FAILED) continue;
            if (!tasks.get(i).asynchronous()) return false;
            any = true;
        }
        return any;
    }

    /** Restores task i; returns whether it came back with a valid program (and so skips the warm-up). */
    private boolean restore(int i) {
        double[] curve;
        try {
            curve = tasks.get(i).restore();
        } catch (RuntimeException e) {
            fail(i, "restoring from the log", e);
            return false;
        }
        int t = curve.length;
        trials[i] = t;
        ct += t;
        if (t == 0) return false;
        double best = curve[t - 1];
        if (!Double.isFinite(best)) return false; // only failures so far: the task gets a warm-up round
        int bestTrial = 1;
        while (curve[bestTrial - 1] != best) bestTrial++;
        cost[i] = best;
        rounds[i] = Math.max(1, (int) (t / (double) perRound + 0.5));
        bestRound[i] = (int) (bestTrial / (double) perRound + 0.5);
        for (int k = 1; k <= rounds[i]; k++) {
            double b = curve[Math.min(k * perRound, t) - 1];
            history.get(i).add(Double.isFinite(b) ? b : NO_LATENCY);
        }
        if (options.perTaskEarlyStopping() > 0 && t - bestTrial > options.perTaskEarlyStopping()) {
            status[i] = TaskStatus.EARLY_STOPPED;
            message[i] = "no better program in the last " + (t - bestTrial) + " logged trials";
        }
        return true;
    }

    /**
     * Starts a round of task i (the first half of Ansor's {@code _tune_task}): with
     * overlapping rounds its programs are handed out and the round is applied later by
     * {@link #end}; otherwise it is measured here. Its trials are reserved from the budget meanwhile.
     */
    private void begin(int i) {
        int want = Math.min(perRound, options.trials() - ct - reserved);
        StartedRound r = null;
        RuntimeException failed = null;
        try {
            r = depth > 1
                    ? tasks.get(i).startRound(want)
                    : StartedRound.done(tasks.get(i).runRound(want));
        } catch (RuntimeException e) {
            failed = e;
        }
        busy[i] = true;
        reserved += want;
        inFlight.addLast(new InFlight(i, want, r, failed));
    }

    /** Applies a round started by {@link #begin} (the second half of {@code _tune_task}); returns its task. */
    private int end(InFlight f) {
        inFlight.remove(f);
        int i = f.task(), want = f.want();
        busy[i] = false;
        reserved -= want;
        RoundOutcome r;
        try {
            if (f.failed() != null) throw f.failed();
            r = f.round().finish();
            if (r.measured() > want) {
                throw new KilnException("task " + i + " (" + tasks.get(i).name() + ") measured " + r.measured()
                        + " programs in a round of " + want);
            }
        } catch (RuntimeException e) {
            fail(i, "its round", e);
            r = new RoundOutcome(0, 0);
        }
        order.add(i);
        rounds[i]++;
        trials[i] += r.measured();
        ct += r.measured();
        double best = tasks.get(i).bestLatency();
        if (status[i] != TaskStatus.FAILED && Double.isFinite(best) && best < cost[i]) {
            cost[i] = best;
            bestRound[i] = rounds[i];
        }
        if (status[i] == TaskStatus.ALIVE) {
            if (r.measured() == 0) {
                status[i] = TaskStatus.SEARCH_SPACE_EXHAUSTED;
                message[i] = "no new program to measure after " + trials[i] + " trial(s)";
            } else if (options.perTaskEarlyStopping() > 0
                    && (long) (rounds[i] - bestRound[i]) * perRound > options.perTaskEarlyStopping()) {
                status[i] = TaskStatus.EARLY_STOPPED;
                message[i] = "no better program in " + (rounds[i] - bestRound[i]) + " round(s) of " + perRound;
            }
        }
        history.get(i).add(cost[i]);
        point(i);
        return i;
    }

    /** A round handed out and not yet applied. */
    private record InFlight(int task, int want, StartedRound round, RuntimeException failed) {}

    private void fail(int i, String what, RuntimeException e) {
        status[i] = TaskStatus.FAILED;
        message[i] = e.getClass().getSimpleName() + ": " + e.getMessage();
        LOG.log(
                System.Logger.Level.WARNING,
                "task scheduler: task " + i + " (" + tasks.get(i).name() + ") failed in " + what
                        + " and is no longer tuned",
                e);
    }

    /** The task with the most negative gradient (see the class comment). */
    private int chooseByGradient() {
        if (options.taskEpsGreedy() > 0 && rng.nextDouble() < options.taskEpsGreedy()) return randomAlive();
        double base = options.objective().evaluate(cost.clone(), weights.clone());
        int argmin = -1;
        double min = Double.POSITIVE_INFINITY, max = Double.NEGATIVE_INFINITY;
        for (int i = 0; i < n; i++) {
            if (status[i].dead() || busy[i]) continue;
            double g = gradient(i, base);
            if (g < min) {
                min = g;
                argmin = i;
            }
            max = Math.max(max, g);
        }
        return min == max ? randomAlive() : argmin;
    }

    /** The gradient of the objective in the next round of task i (Ansor's formula; {@code base} = f(g)). */
    double gradient(int i, double base) {
        double[] lower = cost.clone();
        lower[i] -= DELTA;
        double chain = (base - options.objective().evaluate(lower, weights.clone())) / DELTA;

        List<Double> h = history.get(i);
        int t = rounds[i], w = options.backwardWindow();
        double backward = t - 1 < h.size() && t - 1 - w >= 0 ? (h.get(t - 1) - h.get(t - 1 - w)) / w : 0;

        double g = cost[i];
        double next1 = g - g / t;
        double next2 = options.beta() * 1e30;
        List<Integer> group = groups.members(i);
        if (group.size() > 1) {
            double bestFlops = Double.NEGATIVE_INFINITY;
            for (int j : group) bestFlops = Math.max(bestFlops, flops[j] / cost[j]);
            next2 = options.beta() * flops[i] / bestFlops;
        }
        double forward = Math.min(next1, next2) - g;
        double grad = chain * (options.alpha() * backward + (1 - options.alpha()) * forward);
        if (grad > 0) {
            throw new KilnException("task scheduler: the objective decreases when the latency of task " + i + " ("
                    + tasks.get(i).name() + ") grows (gradient " + grad + ", chain " + chain
                    + "); the gradient strategy "
                    + "needs an objective that does not decrease in any latency");
        }
        return grad;
    }

    /** Ansor's {@code _adjust_similarity_group}. */
    private void adjustSimilarityGroup(int i) {
        List<Integer> group = groups.members(i);
        if (group.size() <= 1) return;
        double bestFlops = Double.NEGATIVE_INFINITY;
        int maxOtherRounds = Integer.MIN_VALUE;
        for (int j : group) {
            bestFlops = Math.max(bestFlops, flops[j] / cost[j]);
            if (j != i) maxOtherRounds = Math.max(maxOtherRounds, rounds[j]);
        }
        double cur = flops[i] / cost[i];
        if (cur < bestFlops / options.beta() && rounds[i] > 5 + maxOtherRounds) groups.remove(i);
    }

    private int randomAlive() {
        int alive = 0;
        for (int i = 0; i < n; i++) if (!status[i].dead() && !busy[i]) alive++;
        int k = rng.nextInt(alive);
        for (int i = 0; i < n; i++) {
            if (!status[i].dead() && !busy[i] && k-- == 0) return i;
        }
        throw new AssertionError("no live task");
    }

    private boolean anyAlive() {
        for (TaskStatus s : status) if (!s.dead()) return true;
        return false;
    }

    /** Whether a live task has no round in flight. */
    private boolean anyStartable() {
        for (int i = 0; i < n; i++) if (!status[i].dead() && !busy[i]) return true;
        return false;
    }

    private boolean allHaveLatency() {
        for (double c : cost) if (c >= NO_LATENCY) return false;
        return true;
    }

    private double score() {
        return options.objective().evaluate(cost.clone(), weights.clone());
    }

    /** The objective, or NaN while a task has no valid program. */
    private double objective() {
        return allHaveLatency() ? score() : Double.NaN;
    }

    private double elapsed() {
        return (nanoTime.getAsLong() - start) / 1e9;
    }

    private List<TaskSummary> summaries() {
        List<TaskSummary> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            out.add(new TaskSummary(
                    i,
                    tasks.get(i).name(),
                    weights[i],
                    flops[i],
                    rounds[i],
                    trials[i],
                    cost[i] >= NO_LATENCY ? Double.POSITIVE_INFINITY : cost[i],
                    status[i],
                    message[i],
                    tasks.get(i).rateUnit()));
        }
        return out;
    }

    /** Records the objective after a round (or the restore), tells the listeners, writes the TSV line. */
    private void point(int task) {
        ObjectivePoint p = new ObjectivePoint(ct, objective(), elapsed(), task);
        points.add(p);
        if (tsv != null) {
            try {
                tsv.write(p.tsvLine());
                tsv.write('\n');
                tsv.flush();
            } catch (IOException e) {
                throw new UncheckedIOException("task scheduler: cannot write " + options.latencyTsv(), e);
            }
        }
        if (task < 0) return;
        SchedulerSnapshot s =
                new SchedulerSnapshot(order.size(), task, summaries(), p.latencySeconds(), ct, p.elapsedSeconds());
        if (options.listener() != null) options.listener().roundDone(s);
        if (options.verbose()) SchedulerListener.table(System.out).roundDone(s);
    }

    private void openTsv() {
        if (options.latencyTsv() == null) return;
        try {
            tsv = Files.newBufferedWriter(options.latencyTsv(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("task scheduler: cannot create " + options.latencyTsv(), e);
        }
    }

    private void closeTsv() {
        if (tsv == null) return;
        try {
            tsv.close();
        } catch (IOException e) {
            LOG.log(
                    System.Logger.Level.WARNING,
                    "task scheduler: closing " + options.latencyTsv() + ": " + e.getMessage());
        }
    }
}
