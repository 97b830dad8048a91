package dev.kiln.bench.network;

import dev.kiln.autoschedule.network.Network;
import dev.kiln.autoschedule.network.NetworkTask;
import dev.kiln.autoschedule.scheduler.ObjectivePoint;
import dev.kiln.bench.plot.CurveChart;
import dev.kiln.bench.plot.TuningCurve;
import dev.kiln.target.Target;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The network bench's tuning-curve PNGs: for each network, thread count and strategy that was
 * tuned, the estimated network speed (operations of every task times its weight, over the best
 * estimated latency) against trials and wall time, read from the curve TSV the task scheduler
 * wrote, with the timed runs of the same network and thread count (PyTorch's and Kiln's own) as
 * horizontal lines. Written next to the TSV, as {@code curve-<network>-<n>t-<strategy>.png}.
 */
final class NetworkCurves {
    private NetworkCurves() {}

    static void write(
            Path dir, List<String> networks, int[] threads, List<String> strategies, List<String> rows, long seed)
            throws IOException {
        for (String n : networks) {
            double ops = Double.NaN;
            for (int t : threads) {
                for (String s : strategies) {
                    Path tsv = dir.resolve("curve-" + n + "-" + t + "t-" + s + ".tsv");
                    if (!Files.isRegularFile(tsv)) continue;
                    if (Double.isNaN(ops)) ops = operations(n, seed);
                    List<ObjectivePoint> history = read(tsv);
                    TuningCurve c = TuningCurve.fromObjective(
                                    n + ", " + t + " thread(s), " + s, history, ops, "GFLOP/s")
                            .withBaselines(baselines(rows, n, t, ops));
                    Path png = dir.resolve("curve-" + n + "-" + t + "t-" + s + ".png");
                    CurveChart.write(png, List.of(c), n + " " + t + "t");
                    System.out.println("written " + png);
                }
            }
        }
    }

    /** The network's operations per run: each task's count times its weight. */
    static double operations(String network, long seed) {
        double ops = 0;
        for (NetworkTask task : Network.tasks(BenchNetworks.graphOf(network, seed), Target.cpu())) {
            ops += (double) task.flops() * task.weight();
        }
        return ops;
    }

    /** Reads the lines {@link ObjectivePoint#tsvLine()} writes. */
    static List<ObjectivePoint> read(Path tsv) throws IOException {
        List<ObjectivePoint> out = new ArrayList<>();
        for (String line : Files.readAllLines(tsv)) {
            String[] f = line.split("\t");
            if (f.length < 6 || !f[0].startsWith("ElapsedTime")) continue;
            double latency = f[3].equals("N/A") ? Double.NaN : Double.parseDouble(f[3]) / 1e3;
            out.add(new ObjectivePoint(Integer.parseInt(f[5]), latency, Double.parseDouble(f[1]), -1));
        }
        return out;
    }

    /** The timed runs of {@code network} on {@code threads} threads, as rates (rows: NetworkRows.HEADER). */
    static Map<String, Double> baselines(List<String> rows, String network, int threads, double ops) {
        Map<String, Double> out = new LinkedHashMap<>();
        for (String r : rows) {
            String[] f = r.split("\t");
            if (f.length < 4 || !f[0].equals(network) || !f[1].equals(String.valueOf(threads))) continue;
            try {
                double ms = Double.parseDouble(f[3]);
                if (ms > 0) out.put(f[2] + " (timed run)", ops / (ms / 1e3) / 1e9);
            } catch (NumberFormatException e) {
                // a crashed or skipped run has no time: no line
            }
        }
        return out;
    }
}
