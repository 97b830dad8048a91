package dev.kiln.autoschedule.scheduler;

/**
 * A task as the scheduler sees it after a round: one row of the progress table.
 *
 * @param index       the task's position in the scheduler's list
 * @param name        its description
 * @param weight      how often it occurs in the network
 * @param flops       FLOPs of one run
 * @param rounds      rounds the scheduler counts for it (restored ones estimated as trials / per-round, as Ansor)
 * @param trials      its trials, restored and new
 * @param bestSeconds its best latency, {@link Double#POSITIVE_INFINITY} while it has no valid program
 * @param status      alive or why it is dead
 * @param message     what killed it (the exception of a {@link TaskStatus#FAILED} task), or empty
 * @param rateUnit    {@code "GFLOP/s"}, or {@code "GOP/s"} for an integer computation
 */
public record TaskSummary(
        int index,
        String name,
        double weight,
        long flops,
        int rounds,
        int trials,
        double bestSeconds,
        TaskStatus status,
        String message,
        String rateUnit) {

    /** A floating-point task's row. */
    public TaskSummary(
            int index,
            String name,
            double weight,
            long flops,
            int rounds,
            int trials,
            double bestSeconds,
            TaskStatus status,
            String message) {
        this(index, name, weight, flops, rounds, trials, bestSeconds, status, message, "GFLOP/s");
    }

    /** Whether the task has a valid program. */
    public boolean hasLatency() {
        return Double.isFinite(bestSeconds);
    }

    /** Its best speed in GFLOP/s, or GOP/s for an integer task (0 without a valid program). */
    public double gflops() {
        return hasLatency() && bestSeconds > 0 ? flops / bestSeconds / 1e9 : 0;
    }

    /** weight x best latency, in seconds (infinite without a valid program). */
    public double weightedSeconds() {
        return weight * bestSeconds;
    }
}
