package dev.kiln.autoschedule.scheduler;

/** Why the task scheduler stopped. */
public enum SchedulerStop {
    /** The trial budget (counting trials restored from the log) is spent. */
    TRIAL_BUDGET,
    /** The time budget ran out (checked before each round after the warm-up). */
    TIME_BUDGET,
    /** Every task is dead. */
    ALL_TASKS_DEAD,
    /** The objective did not improve in {@code earlyStopping} trials (every task having a valid program). */
    EARLY_STOPPING
}
