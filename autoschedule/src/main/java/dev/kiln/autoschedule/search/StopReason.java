package dev.kiln.autoschedule.search;

/** Why a tuning run stopped. */
public enum StopReason {
    /** The task has as many trials as asked for (possibly already before the run, from the log). */
    TRIAL_BUDGET,
    /** The time budget ran out (checked before each program; the program being measured finishes). */
    TIME_BUDGET,
    /** The best program did not improve in the last {@code earlyStopping} trials. */
    EARLY_STOPPING,
    /** The policy found no program that had not been measured. */
    SEARCH_SPACE_EXHAUSTED
}
