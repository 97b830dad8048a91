package dev.kiln.autoschedule.search;

import dev.kiln.ir.KilnException;
import java.time.Duration;
import java.util.Objects;

/**
 * When a {@link SearchLoop} stops and how much it measures at a time.
 *
 * @param trials            the trial budget of the task, counting the trials already in the log
 * @param measuresPerRound  programs measured per round (Ansor: 64)
 * @param timeBudget        the longest the run may take ({@link Duration#ZERO} for no limit); checked
 *                          before each program, so a run overshoots by at most one measurement
 * @param earlyStopping     stop when the best has not improved in this many trials (0 for never)
 */
public record SearchLimits(int trials, int measuresPerRound, Duration timeBudget, int earlyStopping) {
    public SearchLimits {
        Objects.requireNonNull(timeBudget, "timeBudget");
        if (trials < 0) throw new KilnException("the trial budget must not be negative, got " + trials);
        if (measuresPerRound < 1)
            throw new KilnException("measuresPerRound must be at least 1, got " + measuresPerRound);
        if (timeBudget.isNegative()) throw new KilnException("the time budget must not be negative, got " + timeBudget);
        if (earlyStopping < 0)
            throw new KilnException("earlyStopping must not be negative (0 turns it off), got " + earlyStopping);
    }

    /** Whether the run has a time budget. */
    public boolean hasTimeBudget() {
        return !timeBudget.isZero();
    }
}
