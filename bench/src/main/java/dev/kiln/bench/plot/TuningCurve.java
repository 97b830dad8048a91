package dev.kiln.bench.plot;

import dev.kiln.autoschedule.log.LogRecord;
import dev.kiln.autoschedule.scheduler.ObjectivePoint;
import dev.kiln.ir.KilnException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The best speed found so far against trials and wall time, for one tuned workload or network:
 * what a tuning-curve figure ({@link CurveChart}) draws. Each point is the best rate after that
 * many trials, so the curve never goes down.
 *
 * @param name      what was tuned ("GMM 1,128,128,128", "mobilenetv2")
 * @param unit      the rate's unit, {@code "GFLOP/s"} or {@code "GOP/s"} ({@code ComputeDAG.rateUnit()})
 * @param points    in trial order
 * @param baselines other implementations' rates in the same unit, drawn as horizontal lines
 */
public record TuningCurve(String name, String unit, List<Point> points, Map<String, Double> baselines) {

    /**
     * One point.
     *
     * @param trial          trials so far (counting from 1)
     * @param elapsedSeconds wall time since the first trial started
     * @param bestRate       the best rate found so far, in the curve's unit
     */
    public record Point(int trial, double elapsedSeconds, double bestRate) {}

    public TuningCurve {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(unit, "unit");
        points = List.copyOf(points);
        baselines = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(baselines));
        for (int i = 1; i < points.size(); i++) {
            if (points.get(i).bestRate() < points.get(i - 1).bestRate()) {
                throw new KilnException("tuning curve " + name + ": the best rate goes down at point " + i);
            }
        }
    }

    /** The same curve with these baselines. */
    public TuningCurve withBaselines(Map<String, Double> b) {
        return new TuningCurve(name, unit, points, b);
    }

    /**
     * The curve of one workload from its log records (of one workload and target, in log order):
     * re-measurements are not trials and are skipped, failed trials count as trials but do not
     * raise the best. {@code ops} is the workload's operation count ({@code ComputeDAG.flopCount()}).
     * Wall time counts from the start of the first record's measurement.
     */
    public static TuningCurve fromLog(String name, List<LogRecord> records, double ops, String unit) {
        if (!(ops > 0)) throw new KilnException("tuning curve " + name + ": operation count must be positive");
        List<Point> pts = new ArrayList<>();
        double best = Double.POSITIVE_INFINITY;
        int trial = 0;
        java.time.Instant start = null;
        for (LogRecord r : records) {
            if (r.isRemeasure()) continue;
            trial++;
            if (start == null) start = r.timestamp().minus(Duration.ofNanos((long) (r.wallSeconds() * 1e9)));
            best = Math.min(best, r.seconds());
            if (Double.isInfinite(best)) continue;
            double elapsed = Duration.between(start, r.timestamp()).toNanos() / 1e9;
            pts.add(new Point(trial, Math.max(0, elapsed), ops / best / 1e9));
        }
        return new TuningCurve(name, unit, pts, Map.of());
    }

    /**
     * The curve of a network from its task scheduler's history: the rate is the network's
     * operations ({@code ops}: each task's count times its weight) over the best estimated latency
     * so far; points while some task has no valid program are left out.
     */
    public static TuningCurve fromObjective(String name, List<ObjectivePoint> history, double ops, String unit) {
        if (!(ops > 0)) throw new KilnException("tuning curve " + name + ": operation count must be positive");
        List<Point> pts = new ArrayList<>();
        double best = Double.POSITIVE_INFINITY;
        for (ObjectivePoint p : history) {
            if (!p.known()) continue;
            best = Math.min(best, p.latencySeconds());
            pts.add(new Point(p.trials(), p.elapsedSeconds(), ops / best / 1e9));
        }
        return new TuningCurve(name, unit, pts, Map.of());
    }
}
