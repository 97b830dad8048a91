package dev.kiln.autoschedule.network;

import dev.kiln.autoschedule.measure.CallTimer;
import java.util.Locale;

/**
 * A same-process A/B of a network's runs with the parallel runtime's threads held awake across the
 * run and without ({@link CompiledNetwork#compareHold}): runs of the two kinds alternate.
 *
 * @param held            the runs with the threads held
 * @param unheld          the runs without
 * @param heldSleeps      the threads' sleeps per held run (NaN when the runtime does not count them)
 * @param unheldSleeps    the same per run without the hold
 */
public record HoldComparison(CallTimer.Stats held, CallTimer.Stats unheld, double heldSleeps, double unheldSleeps) {
    /** How much faster the held runs are, by medians (above 1: the hold helps). */
    public double speedup() {
        return unheld.median() / held.median();
    }

    /** Two lines: each kind's median, spread and sleeps per run, then the ratio. */
    public String describe() {
        return String.format(
                Locale.ROOT,
                "threads held:     %s, %.1f sleeps per run%n"
                        + "threads not held: %s, %.1f sleeps per run%n"
                        + "held / not held: %.3fx faster by medians (min %.3f against %.3f ms)%n",
                held.describe(),
                heldSleeps,
                unheld.describe(),
                unheldSleeps,
                speedup(),
                held.min() * 1e3,
                unheld.min() * 1e3);
    }
}
