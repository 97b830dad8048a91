package dev.kiln.autoschedule.scheduler;

import dev.kiln.autoschedule.log.TuningLog;
import dev.kiln.autoschedule.measure.Measurer;
import dev.kiln.autoschedule.search.BestProgram;
import dev.kiln.autoschedule.search.PendingRound;
import dev.kiln.autoschedule.search.SearchLoop;
import dev.kiln.autoschedule.search.SearchOutcome;
import dev.kiln.autoschedule.search.SearchPolicy;
import dev.kiln.autoschedule.search.SearchRound;
import dev.kiln.autoschedule.search.StopReason;
import java.util.Optional;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * A {@link TuningTask} as the scheduler drives it: its per-round {@link SearchLoop}, made when
 * the scheduler restores it (so that a policy or measurer that cannot be made kills this task
 * only), over the shared log.
 */
final class SearchTaskRunner implements SchedulableTask, AutoCloseable {
    private final TuningTask task;
    private final Supplier<SearchPolicy> policies;
    private final Function<TuningTask, Measurer> measurers;
    private final TuningLog log;
    private SearchPolicy policy;
    private SearchLoop loop;
    private boolean asynchronous;

    SearchTaskRunner(
            TuningTask task, Supplier<SearchPolicy> policies, Function<TuningTask, Measurer> measurers, TuningLog log) {
        this.task = task;
        this.policies = policies;
        this.measurers = measurers;
        this.log = log;
    }

    @Override
    public String name() {
        return task.description();
    }

    @Override
    public double weight() {
        return task.weight();
    }

    @Override
    public long flops() {
        return task.flops();
    }

    @Override
    public String rateUnit() {
        return task.task().dag().rateUnit();
    }

    @Override
    public String tag() {
        return task.tag();
    }

    @Override
    public double[] restore() {
        Measurer m = measurers.apply(task);
        asynchronous = m.asynchronous();
        policy = policies.get();
        loop = SearchLoop.forRounds(task.task(), policy, m, log);
        loop.restore();
        return loop.bestSecondsByTrial();
    }

    @Override
    public RoundOutcome runRound(int n) {
        SearchRound r = loop.round(n);
        return new RoundOutcome(r.measured(), r.errors());
    }

    @Override
    public StartedRound startRound(int n) {
        PendingRound p = loop.startRound(n);
        return new StartedRound() {
            @Override
            public java.util.concurrent.CompletableFuture<?> measured() {
                return p.measured();
            }

            @Override
            public RoundOutcome finish() {
                SearchRound r = loop.finishRound(p);
                return new RoundOutcome(r.measured(), r.errors());
            }
        };
    }

    @Override
    public boolean asynchronous() {
        return asynchronous;
    }

    @Override
    public double bestLatency() {
        return loop == null
                ? Double.POSITIVE_INFINITY
                : loop.best().map(BestProgram::seconds).orElse(Double.POSITIVE_INFINITY);
    }

    /**
     * Re-measures the task's fastest programs before the scheduler reports ({@link SearchLoop#remeasure()});
     * a failure there is logged and leaves the best as it was. Returns the measurements made.
     */
    int remeasure() {
        if (loop == null) return 0;
        try {
            return loop.remeasure();
        } catch (RuntimeException e) {
            System.getLogger(SearchTaskRunner.class.getName())
                    .log(
                            System.Logger.Level.WARNING,
                            "re-measuring the best programs of " + task.description() + " failed: " + e.getMessage());
            return 0;
        }
    }

    /** The best program so far. */
    Optional<BestProgram> best() {
        return loop == null ? Optional.empty() : loop.best();
    }

    /** The search loop's counts (empty if it was never made). */
    Optional<SearchOutcome> outcome(StopReason reason) {
        return loop == null ? Optional.empty() : Optional.of(loop.outcome(reason));
    }

    @Override
    public void close() {
        if (policy instanceof AutoCloseable c) {
            try {
                c.close();
            } catch (Exception e) {
                System.getLogger(SearchTaskRunner.class.getName())
                        .log(
                                System.Logger.Level.WARNING,
                                "closing the search policy of " + task.description() + ": " + e.getMessage());
            }
        }
    }
}
