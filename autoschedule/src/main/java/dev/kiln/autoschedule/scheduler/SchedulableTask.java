package dev.kiln.autoschedule.scheduler;

/**
 * What the task scheduler needs of a task: its weight, FLOPs and similarity tag, a way to spend
 * one round of trials on it, and its best latency so far. {@link TaskScheduler} wraps each
 * {@link TuningTask}'s per-round {@link dev.kiln.autoschedule.search.SearchLoop} in one; tests
 * use tasks whose latency is a given function of the rounds, so that the choice of the
 * {@link SchedulerLoop} can be worked out by hand.
 */
public interface SchedulableTask {

    /** A short description for tables and messages. */
    String name();

    /** How often the task occurs in the network (positive). */
    double weight();

    /** FLOPs of one run (for GFLOP/s and the similarity groups). */
    long flops();

    /** The unit of its rate: {@code "GFLOP/s"}, or {@code "GOP/s"} for integer arithmetic. */
    default String rateUnit() {
        return "GFLOP/s";
    }

    /** The similarity tag; empty for none. */
    String tag();

    /**
     * Restores what an earlier run measured (once, before the first round): the best latency in
     * seconds after each restored trial, in order, {@link Double#POSITIVE_INFINITY} before the
     * first valid one. Empty when nothing was measured before (the default).
     */
    default double[] restore() {
        return new double[0];
    }

    /** Measures up to {@code n} (at least 1) new programs. */
    RoundOutcome runRound(int n);

    /**
     * Starts a round of up to {@code n} (at least 1) new programs without waiting for their
     * measurements, for the scheduler's {@code overlapRounds}; the round is applied by
     * {@link StartedRound#finish}, and the scheduler starts no other round of this task before.
     * The default runs {@link #runRound} now.
     */
    default StartedRound startRound(int n) {
        return StartedRound.done(runRound(n));
    }

    /**
     * Whether its rounds measure on workers of their own ({@link #startRound} returns before the programs are measured,
     * as with a cluster measurer), known once {@link #restore} has run; the scheduler's default
     * {@link RoundOverlap#WHEN_ASYNCHRONOUS} overlaps rounds when every task says so. False by default.
     */
    default boolean asynchronous() {
        return false;
    }

    /** The best latency in seconds so far; {@link Double#POSITIVE_INFINITY} while no program is valid. */
    double bestLatency();
}
