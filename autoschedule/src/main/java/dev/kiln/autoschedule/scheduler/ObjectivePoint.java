package dev.kiln.autoschedule.scheduler;

/**
 * The objective after a round: one point of the latency-versus-trials curve of a network.
 *
 * @param trials         trials of all tasks so far (restored ones included)
 * @param latencySeconds the objective (estimated end-to-end latency) in seconds; {@link Double#NaN}
 *                       while some task has no valid program (Ansor writes "N/A")
 * @param elapsedSeconds seconds since the scheduler started
 * @param task           the task tuned in the round, or -1 for the point restored from the log
 */
public record ObjectivePoint(int trials, double latencySeconds, double elapsedSeconds, int task) {

    /** Whether every task had a valid program, so that the latency is known. */
    public boolean known() {
        return !Double.isNaN(latencySeconds);
    }

    /** The TSV line of this point, in the columns of Ansor's total_latency.tsv (latency in ms). */
    public String tsvLine() {
        return String.format(
                java.util.Locale.ROOT,
                "ElapsedTime(s)\t%.0f\tEstimatedLatency(ms)\t%s\tTrials\t%d",
                elapsedSeconds,
                known() ? String.format(java.util.Locale.ROOT, "%.3f", latencySeconds * 1e3) : "N/A",
                trials);
    }
}
