package dev.kiln.autoschedule.scheduler;

/**
 * Whether the task scheduler overlaps rounds ({@link TaskSchedulerOptions#overlapRounds()}, see {@link SchedulerLoop}):
 * starts the next task's round while the last one measures, so that a measurer with its own workers (a cluster) never
 * idles at the tail of a round and the tuner's search for the next round runs while the workers measure.
 */
public enum RoundOverlap {
    /**
     * The default: overlap when every task that is tuned measures asynchronously ({@link
     * dev.kiln.autoschedule.measure.Measurer#asynchronous()}: a cluster measurer), round by round otherwise. The local
     * child-JVM measurer measures one program at a time on this machine, so overlapping would buy nothing there and
     * would only change which task a deterministic run chooses next.
     */
    WHEN_ASYNCHRONOUS,
    /** Always overlap (with a synchronous measurer this changes only the order in which results are seen). */
    ALWAYS,
    /** Never: each round is measured and applied before the next task is chosen. */
    NEVER;

    /** Whether rounds overlap when {@code asynchronous} says whether every tuned task measures asynchronously. */
    public boolean overlaps(boolean asynchronous) {
        return switch (this) {
            case WHEN_ASYNCHRONOUS -> asynchronous;
            case ALWAYS -> true;
            case NEVER -> false;
        };
    }
}
