package dev.kiln.autoschedule.measure;

import java.util.HashMap;
import java.util.Map;

/**
 * Which programs a measuring process times only once: those whose checked run is more than {@link #RATIO} times the
 * fastest program of the same workload it has timed so far, and longer than {@link #FLOOR_SECONDS}. Such a program
 * cannot become its task's best, and its full measurement (a warm-up, then every repeat after a cache flush) costs
 * seconds of a tuning budget: in a 300 s ResNet-50 tune (2 threads, twenty-second session) nine programs of 0.05-0.7 s
 * a run took 27 s of it, and one more ran into the 20 s time-out, which also restarts the worker. The bar only
 * applies once the workload has a timed program, so the first programs of every task are timed in full. It also keeps
 * the bar of {@link #promising}: which programs of a flushed measurement are contenders worth the full warm-up.
 */
final class SlowPrograms {
    /** How many times slower than the fastest of its workload a program's first run must be to be timed once. */
    static final double RATIO = 10;
    /** Runs shorter than this are always timed in full (their repeats cost little). */
    static final double FLOOR_SECONDS = 0.05;

    /**
     * How many times the fastest of its workload a program's timing after a short warm-up may be and still count as a
     * contender, which is warmed up in full and timed again ({@link MeasureLoop}). Repeated measurements of one
     * program spread by up to 10-20% at the 90th percentile (docs/PERFORMANCE.md, "Measurement noise"), so a
     * contender read 1.3x slower by the short warm-up is rare; in a QDQ ResNet-50 tune three programs in four were
     * slower than that against their task's final best.
     */
    static final double PROMISE_RATIO = 1.3;

    private final Map<String, Double> fastest = new HashMap<>();

    /** The checked-run time above which a program of {@code workload} is timed once (infinite before any timing). */
    synchronized double bar(String workload) {
        Double f = fastest.get(workload);
        return f == null ? Double.POSITIVE_INFINITY : Math.max(FLOOR_SECONDS, RATIO * f);
    }

    /** The timing above which a program of {@code workload} is no contender (infinite before any timing). */
    synchronized double promising(String workload) {
        Double f = fastest.get(workload);
        return f == null ? Double.POSITIVE_INFINITY : PROMISE_RATIO * f;
    }

    /** Records the timed runs of a program of {@code workload} (nothing for a failed program). */
    synchronized void timed(String workload, double[] costs) {
        double best = Double.POSITIVE_INFINITY;
        for (double c : costs) if (c > 0) best = Math.min(best, c);
        if (best < Double.POSITIVE_INFINITY) fastest.merge(workload, best, Math::min);
    }
}
