package dev.kiln.samples;

/** Median-of-runs timing after warm-up, for the main job's table (not a benchmark harness). */
final class Timing {
    private Timing() {}

    /**
     * Median seconds of up to {@code runs} calls after a warm-up call; a variant slower than half
     * a second per call is timed once (its rank in the table does not need more).
     */
    static double median(Runnable r, int warmup, int runs) {
        long s0 = System.nanoTime();
        r.run();
        double first = (System.nanoTime() - s0) / 1e9;
        if (first > 0.5) return first;
        for (int i = 1; i < warmup; i++) r.run();
        double[] t = new double[runs];
        for (int i = 0; i < runs; i++) {
            long s = System.nanoTime();
            r.run();
            t[i] = (System.nanoTime() - s) / 1e9;
        }
        java.util.Arrays.sort(t);
        return t[runs / 2];
    }
}
