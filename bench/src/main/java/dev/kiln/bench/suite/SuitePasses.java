package dev.kiln.bench.suite;

import dev.kiln.bench.suite.SuiteRow.Status;
import dev.kiln.ir.KilnException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The rows of several timing passes of the suite ({@code --passes}) as one row per workload, thread count and
 * implementation. Each row keeps its fastest pass by median, with every pass's median in its notes; the first pass's
 * row gives everything that is not a timing (the kernel's description, the tuning time and trials, which only the
 * first pass has). A row that failed in any pass (a wrong output, an error, a crash) is reported as it failed, not
 * hidden behind a pass that went well; an implementation without the operator stays unsupported.
 */
public final class SuitePasses {
    private SuitePasses() {}

    /** One row per workload, thread count and implementation, in the order of the first pass (then any new ones). */
    public static List<SuiteRow> fastest(List<List<SuiteRow>> passes) {
        if (passes.isEmpty()) throw new KilnException("suite passes: no pass to merge");
        if (passes.size() == 1) return List.copyOf(passes.getFirst());
        Map<String, List<SuiteRow>> byKey = new LinkedHashMap<>();
        for (List<SuiteRow> pass : passes) {
            for (SuiteRow r : pass) {
                byKey.computeIfAbsent(key(r), k -> new ArrayList<>()).add(r);
            }
        }
        List<SuiteRow> out = new ArrayList<>();
        for (List<SuiteRow> rows : byKey.values()) out.add(merge(rows));
        return out;
    }

    private static String key(SuiteRow r) {
        return r.threads() + "\t" + r.impl() + "\t" + r.workload();
    }

    /** The rows of one workload, thread count and implementation, in pass order, as one. */
    static SuiteRow merge(List<SuiteRow> rows) {
        SuiteRow first = rows.getFirst();
        if (rows.size() == 1) return first;
        for (SuiteRow r : rows) {
            if (r.status() != Status.OK && r.status() != Status.UNSUPPORTED) {
                return withNotes(r, r.notes(), "failed in pass " + (rows.indexOf(r) + 1) + " of " + rows.size());
            }
        }
        if (first.status() != Status.OK) return first;
        SuiteRow best = first;
        int bestPass = 0;
        StringBuilder medians = new StringBuilder();
        double maxErr = first.maxAbsErr();
        for (int p = 0; p < rows.size(); p++) {
            SuiteRow r = rows.get(p);
            if (p > 0) medians.append(", ");
            medians.append(String.format(Locale.ROOT, "%.4g", r.medianMs()));
            if (r.medianMs() < best.medianMs()) {
                best = r;
                bestPass = p;
            }
            if (!(r.maxAbsErr() <= maxErr)) maxErr = r.maxAbsErr();
        }
        String note = String.format(
                Locale.ROOT, "%d passes, medians %s ms: pass %d kept", rows.size(), medians, bestPass + 1);
        return new SuiteRow(
                first.op(),
                first.config(),
                first.threads(),
                first.impl(),
                Status.OK,
                first.kernel(),
                best.minMs(),
                best.medianMs(),
                best.p90Ms(),
                best.calls(),
                best.gflops(),
                maxErr,
                first.relToBest(),
                first.tuneSeconds(),
                first.trials(),
                first.secondsPerTrial(),
                first.outsideMeasure(),
                best.loadBefore(),
                best.loadAfter(),
                joined(first.notes(), note));
    }

    private static String joined(String notes, String more) {
        return notes == null || notes.isEmpty() || notes.equals("-") ? more : notes + "; " + more;
    }

    private static SuiteRow withNotes(SuiteRow r, String notes, String more) {
        return new SuiteRow(
                r.op(),
                r.config(),
                r.threads(),
                r.impl(),
                r.status(),
                r.kernel(),
                r.minMs(),
                r.medianMs(),
                r.p90Ms(),
                r.calls(),
                r.gflops(),
                r.maxAbsErr(),
                r.relToBest(),
                r.tuneSeconds(),
                r.trials(),
                r.secondsPerTrial(),
                r.outsideMeasure(),
                r.loadBefore(),
                r.loadAfter(),
                joined(notes, more));
    }
}
