package dev.kiln.autoschedule.scheduler;

import java.util.ArrayList;
import java.util.List;
import java.util.function.IntToDoubleFunction;

/**
 * A synthetic task for the scheduler's tests: the latency its k-th round (from 1) reaches is
 * {@code curve.applyAsDouble(k)} (seconds; +inf for a round whose programs all fail), its best is
 * the minimum so far, and every round measures all it is asked for, or nothing from round
 * {@code exhaustedAt} on. It remembers the size of every round it was asked for.
 */
class CurveTask implements SchedulableTask {
    final String name;
    final double weight;
    final long flops;
    final String tag;
    final IntToDoubleFunction curve;
    int exhaustedAt = Integer.MAX_VALUE;
    double[] restored = new double[0];
    final List<Integer> asked = new ArrayList<>();
    double best = Double.POSITIVE_INFINITY;

    CurveTask(String name, double weight, long flops, String tag, IntToDoubleFunction curve) {
        this.name = name;
        this.weight = weight;
        this.flops = flops;
        this.tag = tag;
        this.curve = curve;
    }

    /** A task whose rounds reach the given latencies in turn, then stay at the last. */
    static CurveTask of(String name, double weight, double... latencies) {
        return new CurveTask(name, weight, 1_000_000, "", k -> latencies[Math.min(k, latencies.length) - 1]);
    }

    CurveTask tagged(String t, long f) {
        return new CurveTask(name, weight, f, t, curve);
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public double weight() {
        return weight;
    }

    @Override
    public long flops() {
        return flops;
    }

    @Override
    public String tag() {
        return tag;
    }

    @Override
    public double[] restore() {
        if (restored.length > 0) best = restored[restored.length - 1];
        return restored.clone();
    }

    @Override
    public RoundOutcome runRound(int n) {
        asked.add(n);
        int k = asked.size();
        if (k >= exhaustedAt) return new RoundOutcome(0, 0);
        double l = curve.applyAsDouble(k);
        if (!Double.isFinite(l)) return new RoundOutcome(n, n);
        best = Math.min(best, l);
        return new RoundOutcome(n, 0);
    }

    @Override
    public double bestLatency() {
        return best;
    }
}
