package dev.kiln.autoschedule.scheduler;

/** How the task scheduler picks the task that gets the next round. */
public enum Strategy {
    /** Ansor's default: the task whose next round is expected to lower the objective most (notes §9). */
    GRADIENT,
    /** Every live task in turn. */
    ROUND_ROBIN
}
