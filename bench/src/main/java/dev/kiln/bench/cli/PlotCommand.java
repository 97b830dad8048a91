package dev.kiln.bench.cli;

import dev.kiln.autoschedule.log.ProgramCosts;
import dev.kiln.bench.plot.CurveChart;
import dev.kiln.bench.plot.MachinePeaks;
import dev.kiln.bench.plot.RooflineChart;
import dev.kiln.bench.plot.RooflinePoint;
import dev.kiln.bench.plot.TuningCurve;
import dev.kiln.ir.KilnException;
import dev.kiln.target.CpuTarget;
import dev.kiln.target.Target;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code kiln plot curve|roofline}: PNG figures from tuning logs. */
@Command(
        name = "plot",
        mixinStandardHelpOptions = true,
        description = "Draw PNG figures from tuning logs: tuning curves, a roofline.",
        subcommands = {PlotCommand.Curve.class, PlotCommand.Roofline.class})
final class PlotCommand implements Callable<Integer> {
    @Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() {
        spec.commandLine().usage(spec.commandLine().getErr());
        return 2;
    }

    /** Best rate against trials and wall time, one line per workload of the log. */
    @Command(
            name = "curve",
            mixinStandardHelpOptions = true,
            sortOptions = false,
            description = {
                "Tuning curves of a log: best rate against trials and against wall time, baselines as lines.",
                "Example: kiln plot curve --log gmm.jsonl --baseline OpenBLAS=95.5 -o gmm-curve.png"
            })
    static final class Curve implements Callable<Integer> {
        @Option(names = "--log", required = true, split = ",", description = "Tuning log(s).")
        List<Path> logs;

        @Mixin
        WorkloadOptions names = new WorkloadOptions();

        @Option(
                names = "--baseline",
                paramLabel = "NAME=RATE",
                description = "A horizontal line at RATE (the curves' unit), e.g. OpenBLAS=95.5; repeatable.")
        Map<String, Double> baselines = new LinkedHashMap<>();

        @Option(
                names = {"-o", "--out"},
                description = "The PNG to write (default: ${DEFAULT-VALUE}).")
        Path out = Path.of("tuning-curve.png");

        @Option(names = "--title", description = "Chart title (default: the log's name).")
        String title;

        @Option(names = "--json", description = "Print the plotted points as JSON.")
        boolean json;

        @Spec
        picocli.CommandLine.Model.CommandSpec spec;

        @Override
        public Integer call() throws Exception {
            LoggedWorkloads lw = LoggedWorkloads.read(logs, names);
            List<TuningCurve> curves = new ArrayList<>();
            for (LoggedWorkloads.Entry e : lw.entries()) {
                var dag = e.workload().dag();
                curves.add(TuningCurve.fromLog(e.label(), e.records(), dag.flopCount(), dag.rateUnit())
                        .withBaselines(baselines));
            }
            CurveChart.write(
                    out,
                    curves,
                    title != null ? title : logs.getFirst().getFileName().toString());
            Map<String, Object> o = new LinkedHashMap<>();
            o.put("png", out.toString());
            o.put("curves", curves);
            if (!lw.unknownNote().isEmpty()) o.put("note", lw.unknownNote());
            var w = spec.commandLine().getOut();
            if (json) {
                Json.print(w, o);
            } else {
                for (TuningCurve c : curves) {
                    var last = c.points().isEmpty() ? null : c.points().getLast();
                    w.println(c.name() + ": "
                            + (last == null
                                    ? "no valid program"
                                    : String.format(
                                            java.util.Locale.ROOT,
                                            "best %.2f %s after %d trials, %.0f s",
                                            last.bestRate(),
                                            c.unit(),
                                            last.trial(),
                                            last.elapsedSeconds())));
                }
                if (!lw.unknownNote().isEmpty()) w.println("note: " + lw.unknownNote());
                w.println("written " + out);
            }
            return 0;
        }
    }

    /** Tuned kernels under the machine's compute and memory roofs. */
    @Command(
            name = "roofline",
            mixinStandardHelpOptions = true,
            sortOptions = false,
            description = {
                "Roofline of the best kernels of tuning logs: arithmetic intensity against rate, under the measured "
                        + "compute peak and memory bandwidth (or the ones given).",
                "Example: kiln plot roofline --log kiln-bench/suite/tuning-1t.jsonl -o roofline.png"
            })
    static final class Roofline implements Callable<Integer> {
        @Option(names = "--log", required = true, split = ",", description = "Tuning log(s).")
        List<Path> logs;

        @Mixin
        WorkloadOptions names = new WorkloadOptions();

        @Option(names = "--peak-gflops", description = "Compute peak instead of measuring it.")
        Double peak;

        @Option(names = "--bandwidth", paramLabel = "GB/S", description = "Memory bandwidth instead of measuring it.")
        Double bandwidth;

        @Option(
                names = "--stream-mb",
                description = "Size of each of the bandwidth kernel's three arrays, MB (default: ${DEFAULT-VALUE}).")
        long streamMb = 256;

        @Option(
                names = {"-o", "--out"},
                description = "The PNG to write (default: ${DEFAULT-VALUE}).")
        Path out = Path.of("roofline.png");

        @Option(names = "--json", description = "Print the points and the peaks as JSON.")
        boolean json;

        @Spec
        picocli.CommandLine.Model.CommandSpec spec;

        @Override
        public Integer call() throws Exception {
            if ((peak == null) != (bandwidth == null)) {
                throw new KilnException("--peak-gflops and --bandwidth go together (give both, or neither to measure)");
            }
            if (streamMb < 1) throw new KilnException("--stream-mb must be at least 1, got " + streamMb);
            LoggedWorkloads lw = LoggedWorkloads.read(logs, names);
            List<RooflinePoint> points = new ArrayList<>();
            List<String> failed = new ArrayList<>();
            int cores = 0;
            for (LoggedWorkloads.Entry e : lw.entries()) {
                var best = ProgramCosts.of(e.records()).best();
                if (best.isEmpty()) {
                    failed.add(e.label());
                    continue;
                }
                points.add(RooflinePoint.of(
                        e.label(), e.workload().dag(), best.get().seconds()));
                if (Target.parse(e.target()) instanceof CpuTarget c) cores = Math.max(cores, c.cores());
            }
            if (points.isEmpty()) throw new KilnException("--log " + logs + ": no workload has a valid program");
            MachinePeaks peaks;
            if (peak != null) {
                peaks = MachinePeaks.given(peak, bandwidth);
            } else {
                if (cores == 0) {
                    throw new KilnException("the logs hold no CPU target to measure peaks for; give --peak-gflops and "
                            + "--bandwidth (a GPU's datasheet numbers)");
                }
                peaks = MachinePeaks.measure(Target.cpu().withCores(cores), streamMb * 1_000_000 / 4, 0.3);
            }
            String unit = String.join(
                    " / ",
                    lw.entries().stream()
                            .map(e -> e.workload().dag().rateUnit())
                            .distinct()
                            .toList());
            RooflineChart.write(
                    out, points, peaks, unit, "Roofline of " + logs.getFirst().getFileName());
            Map<String, Object> o = new LinkedHashMap<>();
            o.put("png", out.toString());
            o.put("peaks", peaks);
            o.put("points", points);
            if (!failed.isEmpty()) o.put("noValidProgram", failed);
            if (!lw.unknownNote().isEmpty()) o.put("note", lw.unknownNote());
            var w = spec.commandLine().getOut();
            if (json) {
                Json.print(w, o);
            } else {
                w.printf(
                        java.util.Locale.ROOT,
                        "peaks: %.1f GFLOP/s, %.1f GB/s (%s)%n",
                        peaks.gflops(),
                        peaks.gbPerSecond(),
                        peaks.how());
                for (RooflinePoint p : points) {
                    w.printf(
                            java.util.Locale.ROOT,
                            "%-40s %8.3f op/B %10.2f %s (%.0f%% of the roof)%n",
                            p.name(),
                            p.intensity(),
                            p.rate(),
                            unit,
                            100 * p.rate() / peaks.roof(p.intensity()));
                }
                if (!failed.isEmpty()) w.println("no valid program: " + String.join(", ", failed));
                if (!lw.unknownNote().isEmpty()) w.println("note: " + lw.unknownNote());
                w.println("written " + out);
            }
            return 0;
        }
    }
}
