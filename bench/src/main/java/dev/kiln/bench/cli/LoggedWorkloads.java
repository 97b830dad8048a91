package dev.kiln.bench.cli;

import dev.kiln.autoschedule.log.LogRecord;
import dev.kiln.autoschedule.log.TuningLog;
import dev.kiln.ir.KilnException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The workloads of a tuning log, each (workload key, target) with its records in log order,
 * named and given their DAG by the workload list ({@link WorkloadOptions#byKey()}). A log line
 * holds the workload key, not the computation: keys the list does not know are counted in
 * {@link #unknown}, so that a plot can say what it left out.
 */
record LoggedWorkloads(List<Entry> entries, List<String> unknown) {

    /** One workload on one target. */
    record Entry(String label, WorkloadOptions.Named workload, String target, List<LogRecord> records) {}

    static LoggedWorkloads read(List<Path> logs, WorkloadOptions names) {
        Map<String, WorkloadOptions.Named> known = names.byKey();
        String only = names.given() ? names.byKey().keySet().iterator().next() : null;
        Map<List<String>, List<LogRecord>> groups = new LinkedHashMap<>();
        for (Path p : logs) {
            if (!Files.isRegularFile(p)) throw new KilnException("--log: " + p + " does not exist");
            try (TuningLog log = TuningLog.open(p)) {
                for (LogRecord r : log.records()) {
                    groups.computeIfAbsent(List.of(r.workloadKey(), r.target(), p.toString()), k -> new ArrayList<>())
                            .add(r);
                }
            }
        }
        List<Entry> entries = new ArrayList<>();
        List<String> unknown = new ArrayList<>();
        boolean manyTargets =
                groups.keySet().stream().map(k -> k.get(1)).distinct().count() > 1;
        for (var g : groups.entrySet()) {
            String key = g.getKey().get(0);
            if (only != null && !key.equals(only)) continue;
            WorkloadOptions.Named n = known.get(key);
            if (n == null) {
                if (!unknown.contains(key)) unknown.add(key);
                continue;
            }
            String label = n.label();
            if (manyTargets) label += " [" + shortTarget(g.getKey().get(1)) + "]";
            if (logs.size() > 1) label += " (" + Path.of(g.getKey().get(2)).getFileName() + ")";
            entries.add(new Entry(label, n, g.getKey().get(1), g.getValue()));
        }
        if (entries.isEmpty()) {
            throw new KilnException("--log " + logs + ": no record of "
                    + (only != null ? "the workload --op/--config names" : "any workload of the workload list")
                    + (unknown.isEmpty()
                            ? ""
                            : " (" + unknown.size() + " other workload(s) in the log; name them with "
                                    + "--op/--config or --workloads)"));
        }
        return new LoggedWorkloads(entries, unknown);
    }

    /** The note a plot prints about workloads it could not name. */
    String unknownNote() {
        return unknown.isEmpty()
                ? ""
                : unknown.size() + " workload(s) of the log are not in the workload list and were left out (name them "
                        + "with --op/--config or --workloads)";
    }

    private static String shortTarget(String target) {
        String[] w = target.split("\\s+");
        StringBuilder sb = new StringBuilder(w[0]);
        for (String x : w)
            if (x.startsWith("-mcpu=") || x.startsWith("-cores="))
                sb.append(' ').append(x);
        return sb.toString();
    }
}
