package dev.kiln.samples;

/** Median-of-runs timing after warm-up, for the main job's table (not a benchmark harness). */
final class Timing {
    private Timing() {}

    /** Median seconds of {@code runs} calls after {@code warmup} calls. */
    static double median(Runnable r, int warmup, int runs) {
        for (int i = 0; i < warmup; i++) r.run();
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
