package dev.kiln.autoschedule.measure;

import dev.kiln.ir.KilnException;
import java.util.function.LongSupplier;

/**
 * A warm-up by time: runs a kernel untimed, in slices of a tenth of the budget, until three
 * consecutive slices agree on the time per run within {@link #SETTLE_TOLERANCE} (the clock has
 * ramped up, caches, TLBs and the parallel runtime's threads are warm) or the budget has passed.
 * A slice holds at least one run, so a kernel slower than the budget runs once. The clock is
 * injected, so that the rule is tested on a fake kernel without timing anything.
 */
public final class Warmup {
    /** How far apart (max / min - 1) three consecutive slices may be to count as settled. */
    public static final double SETTLE_TOLERANCE = 0.02;
    /** Slices per budget. */
    static final int SLICES = 10;
    /** Consecutive slices that must agree. */
    static final int WINDOW = 3;

    /**
     * What a warm-up did.
     *
     * @param runs       kernel runs it made
     * @param elapsedNs  how long it took, by its clock
     * @param settled    whether it stopped because the times settled (else the budget ran out)
     */
    public record Outcome(long runs, long elapsedNs, boolean settled) {}

    private Warmup() {}

    /** Warms {@code kernel} up for at most {@code budgetMs} milliseconds of {@link System#nanoTime()}. */
    public static Outcome run(Runnable kernel, double budgetMs) {
        return run(kernel, budgetMs, System::nanoTime);
    }

    /** Warms {@code kernel} up for at most {@code budgetMs} milliseconds of {@code clock} (nanoseconds). */
    public static Outcome run(Runnable kernel, double budgetMs, LongSupplier clock) {
        if (!(budgetMs >= 0) || Double.isInfinite(budgetMs)) {
            throw new KilnException("warm-up: budgetMs must be a finite non-negative number, got " + budgetMs);
        }
        if (budgetMs == 0) return new Outcome(0, 0, false);
        long budget = (long) (budgetMs * 1e6), slice = Math.max(1, budget / SLICES);
        double[] recent = new double[WINDOW];
        long runs = 0, start = clock.getAsLong();
        for (int slices = 0; ; slices++) {
            long s0 = clock.getAsLong(), n = 0, now;
            do {
                kernel.run();
                n++;
                now = clock.getAsLong();
            } while (now - s0 < slice);
            runs += n;
            recent[slices % WINDOW] = (double) (now - s0) / n;
            if (slices + 1 >= WINDOW && settled(recent)) return new Outcome(runs, now - start, true);
            if (now - start >= budget) return new Outcome(runs, now - start, false);
        }
    }

    /** Whether the times per run agree within {@link #SETTLE_TOLERANCE}. */
    static boolean settled(double[] perRun) {
        double lo = Double.POSITIVE_INFINITY, hi = 0;
        for (double t : perRun) {
            lo = Math.min(lo, t);
            hi = Math.max(hi, t);
        }
        return lo > 0 ? hi / lo - 1 <= SETTLE_TOLERANCE : hi == 0;
    }
}
