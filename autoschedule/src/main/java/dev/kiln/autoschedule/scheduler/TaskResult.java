package dev.kiln.autoschedule.scheduler;

import dev.kiln.autoschedule.search.BestProgram;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * The end of one task of a {@link TaskScheduler} run.
 *
 * @param task           the task
 * @param summary        the scheduler's view: rounds, trials, best latency, whether and why it is dead
 * @param best           its fastest valid program (from this run or the log), if any
 * @param restoredTrials trials that were in the log when the run started
 * @param errors         failed measurements among all its trials
 * @param errorsByKind   the failed measurements by error kind (LOWER, COMPILE, CRASH, TIMEOUT, ...)
 * @param firstErrors    the first message of each error kind
 */
public record TaskResult(
        TuningTask task,
        TaskSummary summary,
        Optional<BestProgram> best,
        int restoredTrials,
        int errors,
        Map<String, Integer> errorsByKind,
        Map<String, String> firstErrors) {
    public TaskResult {
        Objects.requireNonNull(task, "task");
        Objects.requireNonNull(summary, "summary");
        Objects.requireNonNull(best, "best");
        errorsByKind = Collections.unmodifiableMap(new LinkedHashMap<>(errorsByKind));
        firstErrors = Collections.unmodifiableMap(new LinkedHashMap<>(firstErrors));
    }

    /** Trials of the task in the log after the run. */
    public int trials() {
        return summary.trials();
    }

    /** Trials this run measured. */
    public int newTrials() {
        return summary.trials() - restoredTrials;
    }

    /** Its best latency in seconds ({@link Double#POSITIVE_INFINITY} without a valid program). */
    public double bestSeconds() {
        return summary.bestSeconds();
    }

    /** Alive, or why it is dead. */
    public TaskStatus status() {
        return summary.status();
    }
}
