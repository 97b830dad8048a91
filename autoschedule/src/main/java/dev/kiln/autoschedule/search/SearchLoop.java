package dev.kiln.autoschedule.search;

import dev.kiln.autoschedule.Candidate;
import dev.kiln.autoschedule.SearchTask;
import dev.kiln.autoschedule.log.LogRecord;
import dev.kiln.autoschedule.log.TuningLog;
import dev.kiln.autoschedule.measure.MeasureError;
import dev.kiln.autoschedule.measure.MeasureResult;
import dev.kiln.autoschedule.measure.Measurer;
import dev.kiln.autoschedule.progress.ProgressState;
import dev.kiln.autoschedule.progress.TuneProgress;
import dev.kiln.ir.KilnException;
import dev.kiln.te.Tensor;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.LongSupplier;
import java.util.stream.Collectors;

/**
 * The tuning loop of one task (Ansor's {@code SketchPolicy::Search}, with the program choice left
 * to a {@link SearchPolicy}). Each round asks the policy for up to {@code measuresPerRound} new
 * programs and measures them one by one, appending each result to the log (flushed) before the
 * next program is measured, so that a tuner killed mid-round loses no measurement; it tracks the
 * best and hands the round's trials to the policy. It stops at the trial budget, when the best
 * has not improved in {@code earlyStopping} trials, when the policy finds nothing new, or at the
 * time budget, which is checked before every program (the one being measured finishes; the rest
 * of its round is left out). With an {@link Measurer#asynchronous()} measurer (a cluster, whose
 * workers measure a batch in parallel) a round's programs go to it as one batch instead, and are
 * logged in the batch's order once all are back (a tuner killed mid-round loses that round).
 *
 * <p>Before it reports, {@link #run()} re-measures the fastest programs ({@link #remeasure()}),
 * so that the best is not a program that was lucky once; a program's cost is the median of its
 * measurements ({@link dev.kiln.autoschedule.log.ProgramCosts}).
 *
 * <p>A run resumes from the log: the task's records (same workload key and target) count as
 * trials, their programs are never measured again, the fastest valid one is the best to beat, and
 * the policy is told about them before the first round.
 *
 * <p>A loop can also be driven one round at a time, as the task scheduler does (Ansor's
 * {@code ContinueSearchOneRound}): {@link #restore()} once, then {@link #round(int)} as often as
 * wanted, reading {@link #best()}, {@link #trials()} and the error counts between rounds, and
 * {@link #outcome} at the end. Rounds log, resume and check the policy exactly as {@link #run()}
 * does; the trial budget and early stopping of the limits are then the caller's business (only
 * the time budget, counted from {@link #restore()}, still cuts a round short). {@link #startRound}
 * and {@link #finishRound} split a round in two, for the scheduler's overlapping rounds.
 */
public final class SearchLoop {
    private static final System.Logger LOG = System.getLogger(SearchLoop.class.getName());

    private final SearchTask task;
    private final SearchPolicy policy;
    private final Measurer measurer;
    private final TuningLog log;
    private final SearchLimits limits;
    private final TuneProgress progress;
    private final LongSupplier nanoTime;

    // The state of a run.
    private final Set<String> measured = new HashSet<>();
    private final Map<String, Integer> errorsByKind = new LinkedHashMap<>();
    private final Map<String, String> firstErrors = new LinkedHashMap<>();
    private final List<Double> bestByTrial = new ArrayList<>();
    private final ProgramBook book = new ProgramBook();
    private BestProgram best;
    private int trials, errors, unreplayable, restoredTrials, remeasured;
    private boolean started;
    private long start;
    private PendingRound pending;

    /** A loop timed by {@link System#nanoTime()}. */
    public SearchLoop(
            SearchTask task,
            SearchPolicy policy,
            Measurer measurer,
            TuningLog log,
            SearchLimits limits,
            TuneProgress progress) {
        this(task, policy, measurer, log, limits, progress, System::nanoTime);
    }

    /** A loop whose time budget is read from {@code nanoTime} (a fake clock in tests). */
    public SearchLoop(
            SearchTask task,
            SearchPolicy policy,
            Measurer measurer,
            TuningLog log,
            SearchLimits limits,
            TuneProgress progress,
            LongSupplier nanoTime) {
        this.task = Objects.requireNonNull(task, "task");
        this.policy = Objects.requireNonNull(policy, "policy");
        this.measurer = Objects.requireNonNull(measurer, "measurer");
        this.log = Objects.requireNonNull(log, "log");
        this.limits = Objects.requireNonNull(limits, "limits");
        this.progress = Objects.requireNonNull(progress, "progress");
        this.nanoTime = Objects.requireNonNull(nanoTime, "nanoTime");
    }

    /**
     * A loop to be driven round by round ({@link #round}), with no time budget and no progress
     * display.
     */
    public static SearchLoop forRounds(SearchTask task, SearchPolicy policy, Measurer measurer, TuningLog log) {
        return new SearchLoop(
                task,
                policy,
                measurer,
                log,
                new SearchLimits(Integer.MAX_VALUE, 1, Duration.ZERO, 0),
                TuneProgress.none());
    }

    /** Runs the search until one of the limits stops it. A loop runs once, and not after {@link #restore()}. */
    public SearchOutcome run() {
        if (started) throw new IllegalStateException("a SearchLoop runs once");
        started = true;
        start = nanoTime.getAsLong();
        List<Trial> restored = restoreRecords();
        if (restoredTrials > 0) {
            LOG.log(
                    System.Logger.Level.INFO,
                    "tune {0}: resuming from {1} trials in {2}; best so far {3}",
                    name(),
                    restoredTrials,
                    log.file().map(Object::toString).orElse("the log"),
                    best == null
                            ? "none"
                            : String.format(
                                    java.util.Locale.ROOT,
                                    "%.4g ms (%.2f %s)",
                                    best.seconds() * 1e3,
                                    best.gflops(task.dag().flopCount()),
                                    task.dag().rateUnit()));
        }
        progress.start(name(), state(start));
        StopReason reason;
        try {
            if (!restored.isEmpty()) policy.update(restored);
            while (true) {
                if (trials >= limits.trials()) {
                    reason = StopReason.TRIAL_BUDGET;
                    break;
                }
                if (limits.earlyStopping() > 0 && best != null && trials - best.trial() >= limits.earlyStopping()) {
                    reason = StopReason.EARLY_STOPPING;
                    break;
                }
                if (outOfTime(start)) {
                    reason = StopReason.TIME_BUDGET;
                    break;
                }
                int n = Math.min(limits.measuresPerRound(), limits.trials() - trials);
                SearchRound r = measurer.asynchronous() ? finishRound(startRound(n)) : nextRound(n);
                if (r.exhausted()) {
                    reason = StopReason.SEARCH_SPACE_EXHAUSTED;
                    break;
                }
                if (r.timedOut()) {
                    reason = StopReason.TIME_BUDGET;
                    break;
                }
            }
            remeasure();
        } finally {
            progress.close();
        }
        return outcome(reason);
    }

    /**
     * Re-measures the task's fastest programs before the best is reported, as the measurer's
     * options say ({@link dev.kiln.autoschedule.measure.MeasureOptions#remeasureTop()} programs,
     * {@code remeasureRounds} more measurements each; see {@link Remeasure}). Each re-measurement
     * is appended to the log as a {@link LogRecord#REMEASURE} record (not a trial: the trial count,
     * the policy and the cost model do not see it), and a program's cost becomes the median of its
     * measurements. Programs that already have their measurements (a resumed run) are not measured
     * again. {@link #run()} calls it at the end; a caller driving {@link #round} calls it once done.
     * Returns the number of measurements made.
     */
    public int remeasure() {
        if (!started) restore();
        var o = measurer.options();
        BestProgram before = best;
        int n = Remeasure.run(book, o.remeasureTop(), o.remeasureRounds(), this::remeasureOne);
        remeasured += n;
        if (n > 0) {
            best = book.best().orElse(null);
            LOG.log(
                    System.Logger.Level.INFO,
                    "tune {0}: re-measured the {1} fastest program(s) ({2} measurement(s)); "
                            + "best {3} (before: {4})",
                    name(),
                    o.remeasureTop(),
                    n,
                    describe(best),
                    describe(before));
        }
        return n;
    }

    /** Re-measurements made by this loop (not trials). */
    public int remeasured() {
        return remeasured;
    }

    private MeasureResult remeasureOne(Candidate c) {
        List<MeasureResult> results = measurer.measureCandidates(task, List.of(c));
        if (results.size() != 1) {
            throw new KilnException("measurer " + measurer.getClass().getSimpleName() + " returned " + results.size()
                    + " results for 1 program");
        }
        log.append(toRecord(new Trial(c, results.getFirst())).asRemeasure());
        return results.getFirst();
    }

    private String describe(BestProgram b) {
        return b == null
                ? "none"
                : String.format(java.util.Locale.ROOT, "%.4g ms, trial %d", b.seconds() * 1e3, b.trial());
    }

    /**
     * Restores the task's records from the log, as {@link #run()} does before its first round:
     * they count as trials, are never measured again, set the best to beat, and go to the
     * policy. Call once, before the first {@link #round}; returns the number of trials restored.
     */
    public int restore() {
        if (started)
            throw new IllegalStateException(
                    "this SearchLoop has already started (restore once, before the first round)");
        started = true;
        start = nanoTime.getAsLong();
        List<Trial> restored = restoreRecords();
        if (!restored.isEmpty()) policy.update(restored);
        return restoredTrials;
    }

    /**
     * One round: asks the policy for up to {@code n} new programs and measures them one by one,
     * each appended to the log before the next is measured, then hands the round to the policy.
     * Restores from the log first if {@link #restore()} was not called. A round with nothing new
     * to measure says {@link SearchRound#exhausted()}; a bad program is a failed trial, never an
     * exception. Does not look at the limits' trial budget or early stopping. With an
     * {@link Measurer#asynchronous()} measurer (a cluster) the round's programs go to it as one
     * batch, to be measured in parallel, and are logged when the batch is back.
     */
    public SearchRound round(int n) {
        if (n < 1)
            throw new KilnException(
                    "a search round of task " + task.workloadKey() + " must measure at least 1 program, not " + n);
        if (!started) restore();
        if (measurer.asynchronous()) return finishRound(startRound(n));
        return nextRound(n);
    }

    /**
     * Starts a round without waiting for it: asks the policy for up to {@code n} new programs and
     * hands them to the measurer's {@link Measurer#submit} as one batch. Nothing is logged or given
     * to the policy until {@link #finishRound}; a loop has at most one round pending, and
     * {@link #round} is refused meanwhile. With a synchronous measurer the programs are measured
     * here. A round killed before it finishes leaves nothing in the log: its programs are measured
     * again on resume.
     */
    public PendingRound startRound(int n) {
        if (n < 1)
            throw new KilnException(
                    "a search round of task " + task.workloadKey() + " must measure at least 1 program, not " + n);
        if (pending != null)
            throw new IllegalStateException("task " + task.workloadKey() + " already has a round pending");
        if (!started) restore();
        List<Candidate> batch = policy.nextBatch(n, Collections.unmodifiableSet(measured));
        checkBatch(batch, n);
        java.util.concurrent.CompletableFuture<List<MeasureResult>> f = batch.isEmpty()
                ? java.util.concurrent.CompletableFuture.completedFuture(List.of())
                : measurer.submit(task, batch.stream().map(Candidate::schedule).toList());
        pending = new PendingRound(this, batch, f);
        return pending;
    }

    /**
     * Waits for a round started by {@link #startRound}, appends its records to the log in the
     * batch's order, counts them and hands them to the policy, as {@link #round} does. A failed
     * measurement (the cluster gone, say) throws a {@link KilnException} and the round's programs
     * are not logged.
     */
    public SearchRound finishRound(PendingRound p) {
        if (p == null || p.loop() != this || p != pending || p.finished())
            throw new IllegalStateException("not the pending round of task " + task.workloadKey());
        p.finish();
        pending = null;
        if (p.batch().isEmpty()) return new SearchRound(List.of(), true, false);
        List<MeasureResult> results;
        try {
            results = p.results().join();
        } catch (java.util.concurrent.CompletionException | java.util.concurrent.CancellationException e) {
            Throwable c = e.getCause() == null ? e : e.getCause();
            if (c instanceof KilnException k) throw k;
            throw new KilnException("measuring a round of task " + task.workloadKey() + " failed: " + c);
        }
        if (results.size() != p.batch().size()) {
            throw new KilnException("measurer " + measurer.getClass().getSimpleName() + " returned " + results.size()
                    + " results for " + p.batch().size() + " programs");
        }
        List<Trial> round = new ArrayList<>();
        for (int i = 0; i < results.size(); i++) recordTrial(round, p.batch().get(i), results.get(i), start);
        return endRound(round, false, start);
    }

    private SearchRound nextRound(int n) {
        if (pending != null)
            throw new IllegalStateException("task " + task.workloadKey() + " has a round pending (finishRound first)");
        List<Candidate> batch = policy.nextBatch(n, Collections.unmodifiableSet(measured));
        checkBatch(batch, n);
        if (batch.isEmpty()) return new SearchRound(List.of(), true, false);
        return measureRound(batch, start);
    }

    /** The task's fastest valid program so far (restored or measured). */
    public java.util.Optional<BestProgram> best() {
        return java.util.Optional.ofNullable(best);
    }

    /** Trials of the task so far: restored from the log and measured. */
    public int trials() {
        return trials;
    }

    /** Trials that were in the log when the loop started. */
    public int restoredTrials() {
        return restoredTrials;
    }

    /** Failed measurements among all trials so far. */
    public int errors() {
        return errors;
    }

    /** The failed measurements so far, by error kind. */
    public Map<String, Integer> errorsByKind() {
        return Collections.unmodifiableMap(new LinkedHashMap<>(errorsByKind));
    }

    /** The first message of each error kind so far. */
    public Map<String, String> firstErrors() {
        return Collections.unmodifiableMap(new LinkedHashMap<>(firstErrors));
    }

    /** Logged records whose schedule no longer replays (counted as trials, never applied). */
    public int unreplayable() {
        return unreplayable;
    }

    /**
     * The best time (seconds) after each trial so far, in order, {@link Double#POSITIVE_INFINITY}
     * until the first valid one: entry {@code i} is the best of the first {@code i + 1} trials.
     */
    public double[] bestSecondsByTrial() {
        return bestByTrial.stream().mapToDouble(Double::doubleValue).toArray();
    }

    /** The loop's state as an outcome, stopped for {@code reason}; elapsed counts from the start of the run. */
    public SearchOutcome outcome(StopReason reason) {
        Objects.requireNonNull(reason, "reason");
        Duration elapsed = started ? Duration.ofNanos(nanoTime.getAsLong() - start) : Duration.ZERO;
        return new SearchOutcome(
                java.util.Optional.ofNullable(best),
                trials,
                restoredTrials,
                trials - restoredTrials,
                errors,
                errorsByKind,
                firstErrors,
                unreplayable,
                reason,
                elapsed);
    }

    /** The task this loop searches. */
    public SearchTask task() {
        return task;
    }

    /** The policy choosing its programs. */
    public SearchPolicy policy() {
        return policy;
    }

    /**
     * Measures the programs of a round in parts of the measurer's {@link Measurer#batchSize()} (one by one by
     * default), each program logged in order as its part comes back, and hands the trials to the policy. The round
     * is cut short (timed out) when the time budget runs out, checked before each part.
     */
    private SearchRound measureRound(List<Candidate> batch, long start) {
        List<Trial> round = new ArrayList<>();
        boolean complete = true;
        int size = Math.max(1, measurer.batchSize());
        for (int i = 0; i < batch.size(); i += size) {
            if (!round.isEmpty() && outOfTime(start)) {
                complete = false;
                break;
            }
            List<Candidate> part = batch.subList(i, Math.min(batch.size(), i + size));
            List<MeasureResult> results = measurer.measureCandidates(task, part);
            if (results.size() != part.size()) {
                throw new KilnException("measurer " + measurer.getClass().getSimpleName() + " returned "
                        + results.size() + " results for " + part.size() + " program(s)");
            }
            for (int k = 0; k < part.size(); k++) recordTrial(round, part.get(k), results.get(k), start);
        }
        return endRound(round, !complete, start);
    }

    /** Logs a measured program as a trial, counts it, adds it to {@code round} and reports the progress. */
    private void recordTrial(List<Trial> round, Candidate c, MeasureResult result, long start) {
        Trial t = new Trial(c, result);
        log.append(toRecord(t));
        count(c, result.error().name(), result.errorMessage(), result.cost());
        round.add(t);
        progress.update(state(start));
    }

    /** Hands a measured round to the policy and reports it done. */
    private SearchRound endRound(List<Trial> round, boolean timedOut, long start) {
        policy.update(round);
        progress.roundDone(state(start));
        return new SearchRound(round, false, timedOut);
    }

    /** The log record of a trial of this task. */
    public LogRecord toRecord(Trial t) {
        return LogRecord.of(task, t.candidate().schedule(), t.result())
                .withTransferFrom(policy.transferredFrom(t.candidate()));
    }

    /** Counts the task's logged records as trials; returns those that replay, for the policy. */
    private List<Trial> restoreRecords() {
        List<Trial> out = new ArrayList<>();
        String firstFailure = null;
        for (LogRecord r : log.records(task.workloadKey(), task.targetDescription())) {
            Candidate c;
            try {
                c = Candidate.of(r.schedule(task));
            } catch (KilnException e) {
                if (r.isRemeasure()) continue;
                trials++;
                unreplayable++;
                bestByTrial.add(best == null ? Double.POSITIVE_INFINITY : best.seconds());
                if (firstFailure == null) firstFailure = e.getMessage();
                continue;
            }
            if (r.isRemeasure()) {
                book.add(c, r.isValid(), r.seconds(), trials);
                best = book.best().orElse(null);
                continue;
            }
            count(c, r.errorKind(), r.errorMessage(), r.seconds());
            MeasureResult m = toResult(r);
            if (m != null) out.add(new Trial(c, m));
        }
        if (unreplayable > 0) {
            LOG.log(
                    System.Logger.Level.WARNING,
                    "tune {0}: {1} logged record(s) of this workload no longer replay "
                            + "and are never applied (first: {2})",
                    name(),
                    unreplayable,
                    firstFailure);
        }
        restoredTrials = trials;
        return out;
    }

    private void count(Candidate c, String errorKind, String message, double seconds) {
        trials++;
        measured.add(c.key());
        if (!errorKind.equals(LogRecord.NO_ERROR)) {
            errors++;
            errorsByKind.merge(errorKind, 1, Integer::sum);
            firstErrors.putIfAbsent(errorKind, message);
        }
        boolean valid = errorKind.equals(LogRecord.NO_ERROR);
        if (!book.add(c, valid, seconds, trials)) best = book.best().orElse(null);
        else if (valid && (best == null || seconds < best.seconds()))
            best = new BestProgram(c.schedule(), seconds, trials);
        bestByTrial.add(best == null ? Double.POSITIVE_INFINITY : best.seconds());
    }

    /** The measurement a record holds; null for an error kind this version does not know. */
    private static MeasureResult toResult(LogRecord r) {
        MeasureError e;
        try {
            e = MeasureError.valueOf(r.errorKind());
        } catch (IllegalArgumentException unknown) {
            return null;
        }
        double[] costs = e == MeasureError.NONE
                ? r.costs().stream().mapToDouble(Double::doubleValue).toArray()
                : new double[0];
        return new MeasureResult(
                costs,
                e,
                e == MeasureError.NONE ? "" : r.errorMessage(),
                r.compileSeconds(),
                r.wallSeconds(),
                r.timestamp().toEpochMilli());
    }

    private void checkBatch(List<Candidate> batch, int n) {
        if (batch.size() > n) {
            throw new KilnException("search policy " + policy.name() + " returned " + batch.size() + " programs, "
                    + "more than the " + n + " asked for");
        }
        Set<String> keys = new HashSet<>();
        for (Candidate c : batch) {
            if (measured.contains(c.key()) || !keys.add(c.key())) {
                throw new KilnException("search policy " + policy.name() + " returned a program that "
                        + (measured.contains(c.key()) ? "was already measured" : "is twice in its batch") + ":\n"
                        + c.key());
            }
        }
    }

    private boolean outOfTime(long start) {
        return limits.hasTimeBudget()
                && nanoTime.getAsLong() - start >= limits.timeBudget().toNanos();
    }

    private ProgressState state(long start) {
        double gflops = best == null ? 0 : best.gflops(task.dag().flopCount());
        return new ProgressState(
                trials,
                limits.trials(),
                gflops,
                errors,
                Duration.ofNanos(nanoTime.getAsLong() - start),
                task.dag().rateUnit());
    }

    private String name() {
        return task.dag().outputs().stream().map(Tensor::name).collect(Collectors.joining(","));
    }
}
