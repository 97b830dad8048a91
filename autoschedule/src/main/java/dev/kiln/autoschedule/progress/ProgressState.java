package dev.kiln.autoschedule.progress;

import java.time.Duration;
import java.util.Locale;

/**
 * Where a tuning run stands, as shown to the user.
 *
 * @param done        trials of the task so far (those restored from the log included)
 * @param total       the trial budget
 * @param bestGflops  the best program's speed so far (0 while there is none)
 * @param errors      failed measurements so far
 * @param elapsed     time since this run started
 * @param unit        the rate's unit: {@code "GFLOP/s"}, or {@code "GOP/s"} for an integer computation
 *                    ({@code ComputeDAG.rateUnit()})
 */
public record ProgressState(int done, int total, double bestGflops, int errors, Duration elapsed, String unit) {

    public ProgressState {
        if (unit == null || unit.isEmpty()) throw new IllegalArgumentException("a progress state needs a rate unit");
    }

    /** A state of a floating-point computation (rates in GFLOP/s). */
    public ProgressState(int done, int total, double bestGflops, int errors, Duration elapsed) {
        this(done, total, bestGflops, errors, elapsed, "GFLOP/s");
    }

    /** {@code "best 12.3 GFLOP/s, 2 errors"} ({@code GOP/s} for an integer computation). */
    public String summary() {
        return String.format(
                Locale.ROOT,
                "best %s %s, %d error%s",
                bestGflops > 0 ? String.format(Locale.ROOT, "%.2f", bestGflops) : "-",
                unit,
                errors,
                errors == 1 ? "" : "s");
    }

    /** {@code "64/200 trials, best 12.3 GFLOP/s, 2 errors, 00:00:14 elapsed"}. */
    public String line() {
        long s = elapsed.toSeconds();
        return String.format(
                Locale.ROOT,
                "%d/%d trials, %s, %02d:%02d:%02d elapsed",
                done,
                total,
                summary(),
                s / 3600,
                s / 60 % 60,
                s % 60);
    }
}
