package dev.kiln.autoschedule.search;

import java.time.Duration;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * What a {@link SearchLoop} run ends with. Counts cover the task's whole log: the trials restored
 * from it and those measured by this run.
 *
 * @param best            the fastest valid program, if any
 * @param trials          trials of the task in the log after the run
 * @param restoredTrials  trials that were already in the log when the run started
 * @param newTrials       trials this run measured
 * @param errors          failed measurements among all trials
 * @param errorsByKind    the failed measurements by error kind (LOWER, COMPILE, ...)
 * @param firstErrors     the first message of each error kind
 * @param unreplayable    logged records whose schedule no longer replays on the DAG (counted as trials, never applied)
 * @param stopReason      why the run stopped
 * @param elapsed         how long this run took
 */
public record SearchOutcome(
        Optional<BestProgram> best,
        int trials,
        int restoredTrials,
        int newTrials,
        int errors,
        Map<String, Integer> errorsByKind,
        Map<String, String> firstErrors,
        int unreplayable,
        StopReason stopReason,
        Duration elapsed) {
    public SearchOutcome {
        errorsByKind = Collections.unmodifiableMap(new LinkedHashMap<>(errorsByKind));
        firstErrors = Collections.unmodifiableMap(new LinkedHashMap<>(firstErrors));
    }
}
