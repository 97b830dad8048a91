package dev.kiln.bench.network;

import dev.kiln.autoschedule.measure.CallTimer;

/**
 * One implementation's time in {@code ./kiln network-bench} and {@code ./kiln onnx}, taken as a user runs it: warm-up
 * runs, a warm-up by time that stops once the run times settle, then runs back to back until
 * there are enough of them and enough seconds ({@link CallTimer}); with the load average around it.
 */
public record Timing(
        double medianMs, double minMs, double p10Ms, double p90Ms, int runs, String loadBefore, String loadAfter) {

    /**
     * Times {@code run}: {@code warmup} runs, a warm-up by time of at most {@code warmupMs}, then at
     * least {@code repeats} runs and {@code minSeconds} (at most 10x that, 60 s at least).
     */
    public static Timing of(Runnable run, int warmup, double warmupMs, int repeats, double minSeconds) {
        String before = BenchHost.loadAverage();
        for (int i = 0; i < warmup; i++) run.run();
        int n = Math.max(1, repeats);
        CallTimer.Stats st = CallTimer.time(
                run,
                new CallTimer.Policy(warmupMs, n, minSeconds, Math.max(n, 1_000_000), Math.max(60, 10 * minSeconds)));
        String after = BenchHost.loadAverage();
        return new Timing(st.median() * 1e3, st.min() * 1e3, st.p10() * 1e3, st.p90() * 1e3, st.calls(), before, after);
    }
}
