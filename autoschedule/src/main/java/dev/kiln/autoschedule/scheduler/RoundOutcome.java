package dev.kiln.autoschedule.scheduler;

import dev.kiln.ir.KilnException;

/**
 * What one round of a {@link SchedulableTask} measured.
 *
 * @param measured new programs measured (0: the task found nothing new to measure, its search
 *                 space is used up, and the scheduler stops tuning it)
 * @param errors   how many of them failed to lower, compile, run or check
 */
public record RoundOutcome(int measured, int errors) {
    public RoundOutcome {
        if (measured < 0 || errors < 0 || errors > measured) {
            throw new KilnException(
                    "a round outcome needs 0 <= errors <= measured, got " + errors + " errors of " + measured);
        }
    }
}
