package dev.kiln.bench.suite;

import dev.kiln.bench.suite.SuiteRow.Status;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The suite's results as people read them: each row's speed relative to the best implementation
 * of its workload and thread count (the paper's normalisation), the table, and per operator the
 * geometric mean of those ratios (one bar group of the figure).
 */
final class SuiteReport {
    private SuiteReport() {}

    /**
     * The rows with {@code relToBest} filled in: best median / this median, among OK rows of the same workload and
     * threads.
     */
    static List<SuiteRow> withRatios(List<SuiteRow> rows) {
        Map<String, Double> best = new LinkedHashMap<>();
        for (SuiteRow r : rows) {
            if (r.status() == Status.OK) best.merge(group(r), r.medianMs(), Math::min);
        }
        return rows.stream()
                .map(r -> r.status() == Status.OK ? r.withRelToBest(best.get(group(r)) / r.medianMs()) : r)
                .toList();
    }

    private static String group(SuiteRow r) {
        return r.workload() + "|" + r.threads();
    }

    /**
     * The geometric mean of relToBest per operator and implementation, for thread count {@code threads}; NaN where none
     * ran.
     */
    static Map<String, Map<String, Double>> byOperator(List<SuiteRow> rows, int threads, List<String> impls) {
        Map<String, Map<String, Double>> out = new LinkedHashMap<>();
        for (SuiteRow r : rows) {
            if (r.threads() != threads) continue;
            out.computeIfAbsent(r.op(), k -> new LinkedHashMap<>());
        }
        for (String op : out.keySet()) {
            for (String impl : impls) {
                double[] v = rows.stream()
                        .filter(r -> r.threads() == threads
                                && r.op().equals(op)
                                && r.impl().equals(impl)
                                && r.status() == Status.OK)
                        .mapToDouble(SuiteRow::relToBest)
                        .toArray();
                double g = v.length == 0
                        ? Double.NaN
                        : Math.exp(java.util.Arrays.stream(v).map(Math::log).sum() / v.length);
                out.get(op).put(impl, g);
            }
        }
        return out;
    }

    /**
     * What did not run, one phrase per implementation and status, e.g. "openblas UNSUPPORTED: C1D, C2D"
     * or, for a single operator, with its reason: "onednn UNSUPPORTED: CAP (oneDNN has no capsule convolution)".
     */
    static List<String> absent(List<SuiteRow> rows, int threads) {
        Map<String, Map<String, String>> ops = new LinkedHashMap<>(); // "impl STATUS" -> op -> first reason
        for (SuiteRow r : rows) {
            if (r.threads() != threads || r.status() == Status.OK) continue;
            ops.computeIfAbsent(r.impl() + " " + r.status(), k -> new LinkedHashMap<>())
                    .putIfAbsent(r.op(), r.notes());
        }
        List<String> out = new ArrayList<>();
        for (var e : ops.entrySet()) {
            Map<String, String> byOp = e.getValue();
            String reason = byOp.size() == 1 && !byOp.values().iterator().next().isEmpty()
                    ? " (" + shorten(byOp.values().iterator().next()) + ")"
                    : "";
            out.add(e.getKey() + ": " + String.join(", ", byOp.keySet()) + reason);
        }
        return out;
    }

    private static String shorten(String s) {
        return s.length() <= 90 ? s : s.substring(0, 87) + "...";
    }

    /** The table printed at the end. */
    static String table(List<SuiteRow> rows) {
        StringBuilder sb = new StringBuilder();
        sb.append(String.format(
                Locale.ROOT,
                "%-32s %3s %-9s %-11s %9s %9s %9s %6s %8s %6s %8s %7s %7s  %s%n",
                "workload",
                "thr",
                "impl",
                "status",
                "min ms",
                "median ms",
                "p90 ms",
                "spread",
                "GFLOP/s",
                "vsBest",
                "tune s",
                "s/trial",
                "outside",
                "kernel"));
        for (SuiteRow r : rows) {
            sb.append(String.format(
                    Locale.ROOT,
                    "%-32s %3d %-9s %-11s %9s %9s %9s %6s %8s %6s %8s %7s %7s  %s%n",
                    r.workload(),
                    r.threads(),
                    r.impl(),
                    r.status(),
                    f(r.minMs(), "%.4f"),
                    f(r.medianMs(), "%.4f"),
                    f(r.p90Ms(), "%.4f"),
                    f((r.p90Ms() - r.minMs()) / r.medianMs() * 100, "%.0f%%"),
                    f(r.gflops(), "%.1f"),
                    f(r.relToBest(), "%.2f"),
                    f(r.tuneSeconds(), "%.1f"),
                    f(r.secondsPerTrial(), "%.3f"),
                    f(r.outsideMeasure() * 100, "%.0f%%"),
                    r.kernel()));
        }
        rows.stream()
                .filter(r -> !r.notes().isEmpty())
                .map(r -> r.workload() + " " + r.threads() + "t " + r.impl() + ": " + r.notes())
                .distinct()
                .forEach(n -> sb.append(n).append('\n'));
        return sb.toString();
    }

    private static String f(double v, String fmt) {
        return Double.isNaN(v) ? "-" : String.format(Locale.ROOT, fmt, v);
    }
}
