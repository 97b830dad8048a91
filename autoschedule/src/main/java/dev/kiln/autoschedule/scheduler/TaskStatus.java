package dev.kiln.autoschedule.scheduler;

/** Where a task stands when the scheduler stops: still being tuned, or dead and why. */
public enum TaskStatus {
    /** Still tuned when the scheduler stopped (budget spent, or global early stopping). */
    ALIVE,
    /** No valid program after its warm-up round: every program it measured failed. */
    NO_VALID_PROGRAM,
    /** Per-task early stopping: no better program in more trials than the threshold. */
    EARLY_STOPPED,
    /** A round found no new program to measure. */
    SEARCH_SPACE_EXHAUSTED,
    /** Its search threw (a policy or measurer that broke its contract); the message says what. */
    FAILED;

    /** Whether the scheduler no longer gives the task rounds. */
    public boolean dead() {
        return this != ALIVE;
    }
}
