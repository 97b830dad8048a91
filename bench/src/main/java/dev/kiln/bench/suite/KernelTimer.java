package dev.kiln.bench.suite;

import dev.kiln.bench.network.BenchHost;
import dev.kiln.ir.KilnException;
import java.util.Arrays;

/**
 * Times a kernel the way a user runs it: back-to-back calls on the same buffers after a warm-up
 * of at least {@code warmupCalls} calls and {@code warmupSeconds}, then {@code repeats} samples,
 * each the mean of as many back-to-back calls as fill {@code minSampleSeconds} (one call when a
 * call is longer). The spread of the samples is reported (min, median, p90), not only a best case.
 *
 * @param warmupCalls      untimed calls first (at least)
 * @param warmupSeconds    untimed seconds first (at least)
 * @param repeats          timed samples
 * @param minSampleSeconds the least a sample lasts
 */
public record KernelTimer(int warmupCalls, double warmupSeconds, int repeats, double minSampleSeconds) {
    public KernelTimer {
        if (warmupCalls < 0 || warmupSeconds < 0 || repeats < 1 || minSampleSeconds < 0) {
            throw new KilnException("timing: warm-up must be >= 0 and repeats >= 1, got warm-up " + warmupCalls
                    + " calls / " + warmupSeconds + " s, repeats " + repeats + ", sample " + minSampleSeconds + " s");
        }
    }

    /** What a timing gave, in milliseconds per call. */
    public record Timing(
            double minMs, double medianMs, double p90Ms, int samples, long calls, String loadBefore, String loadAfter) {
        /** (p90 - min) / median: how far apart the samples were. */
        public double spread() {
            return (p90Ms - minMs) / medianMs;
        }
    }

    /** Warms up, then samples {@code run}. */
    public Timing time(Runnable run) {
        String before = BenchHost.loadAverage();
        long start = System.nanoTime();
        int n = 0;
        double callSeconds = 0;
        while (n < Math.max(1, warmupCalls) || (System.nanoTime() - start) / 1e9 < warmupSeconds) {
            long s = System.nanoTime();
            run.run();
            callSeconds = (System.nanoTime() - s) / 1e9;
            n++;
        }
        int perSample =
                (int) Math.max(1, Math.min(1_000_000, Math.ceil(minSampleSeconds / Math.max(callSeconds, 1e-9))));
        double[] ms = new double[repeats];
        for (int i = 0; i < repeats; i++) {
            long s = System.nanoTime();
            for (int c = 0; c < perSample; c++) run.run();
            ms[i] = (System.nanoTime() - s) / 1e6 / perSample;
        }
        Arrays.sort(ms);
        return new Timing(
                ms[0],
                quantile(ms, 0.5),
                quantile(ms, 0.9),
                repeats,
                (long) repeats * perSample,
                before,
                BenchHost.loadAverage());
    }

    /** The q-quantile of sorted values, interpolated linearly. */
    static double quantile(double[] sorted, double q) {
        double pos = q * (sorted.length - 1);
        int lo = (int) Math.floor(pos);
        int hi = Math.min(sorted.length - 1, lo + 1);
        return sorted[lo] + (pos - lo) * (sorted[hi] - sorted[lo]);
    }
}
