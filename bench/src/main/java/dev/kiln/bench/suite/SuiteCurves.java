package dev.kiln.bench.suite;

import dev.kiln.autoschedule.log.LogRecord;
import dev.kiln.autoschedule.log.TuningLog;
import dev.kiln.bench.network.NetworkLogs;
import dev.kiln.bench.plot.CurveChart;
import dev.kiln.bench.plot.TuningCurve;
import dev.kiln.te.ComputeDAG;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The suite's tuning-curve PNGs: for each workload Kiln tuned and each thread count, the best
 * rate against trials and wall time from that thread count's log, with the baselines' measured
 * rates (PyTorch, oneDNN, OpenBLAS, where they ran) as horizontal lines. Written to
 * {@code <dir>/curves/<workload key>-<n>t.png}, next to the logs under the default {@code --dir}.
 */
final class SuiteCurves {
    private SuiteCurves() {}

    static void write(Path dir, Path log, List<SuiteWorkload> selected, int[] threads, boolean fma, List<SuiteRow> rows)
            throws IOException {
        for (int t : threads) {
            Path file = NetworkLogs.logFor(log, t);
            if (!Files.isRegularFile(file)) continue;
            String target = SuiteChild.target(t, fma).toString();
            int written = 0;
            try (TuningLog l = TuningLog.open(file)) {
                for (SuiteWorkload w : selected) {
                    ComputeDAG dag = SuiteDags.of(w);
                    List<LogRecord> recs = l.records(dag.workloadKey(), target);
                    if (recs.isEmpty()) continue;
                    Map<String, Double> base = new LinkedHashMap<>();
                    for (SuiteRow r : rows) {
                        if (r.workload().equals(w.label())
                                && r.threads() == t
                                && !r.impl().equals("kiln")
                                && r.status() == SuiteRow.Status.OK) {
                            base.put(r.impl(), r.gflops());
                        }
                    }
                    TuningCurve c = TuningCurve.fromLog(w.label(), recs, dag.flopCount(), dag.rateUnit())
                            .withBaselines(base);
                    CurveChart.write(
                            dir.resolve("curves").resolve(w.key() + "-" + t + "t.png"),
                            List.of(c),
                            w.label() + ", " + t + " thread(s)");
                    written++;
                }
            }
            if (written > 0) {
                System.out.println("written " + written + " tuning curve(s) to " + dir.resolve("curves") + " (" + t
                        + " thread(s))");
            }
        }
    }
}
