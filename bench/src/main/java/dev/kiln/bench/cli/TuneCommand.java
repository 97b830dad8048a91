package dev.kiln.bench.cli;

import dev.kiln.autoschedule.log.TuningLog;
import dev.kiln.autoschedule.measure.LocalMeasurer;
import dev.kiln.autoschedule.measure.MeasureOptions;
import dev.kiln.autoschedule.measure.Measurer;
import dev.kiln.autoschedule.measure.MeasurerProviders;
import dev.kiln.autoschedule.network.CompiledNetwork;
import dev.kiln.autoschedule.network.Network;
import dev.kiln.autoschedule.network.NetworkTask;
import dev.kiln.autoschedule.network.NetworkTuneOptions;
import dev.kiln.autoschedule.scheduler.SchedulerResult;
import dev.kiln.autoschedule.tune.AutoSchedule;
import dev.kiln.autoschedule.tune.TuneOptions;
import dev.kiln.autoschedule.tune.TuneResult;
import dev.kiln.bench.cluster.ClusterTuneOptions;
import dev.kiln.bench.cluster.JobReport;
import dev.kiln.bench.network.BenchNetworks;
import dev.kiln.bench.plot.CurveChart;
import dev.kiln.bench.plot.TuningCurve;
import dev.kiln.bench.suite.SuiteDags;
import dev.kiln.bench.suite.SuiteWorkload;
import dev.kiln.graph.Graph;
import dev.kiln.ir.KilnException;
import dev.kiln.target.Target;
import dev.kiln.te.ComputeDAG;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code kiln tune}: tunes an operator of the workload library ({@link AutoSchedule#tune}) or a
 * whole network ({@link Network#tune}), every measurement appended to {@code --log}; prints the
 * result (or JSON), and with {@code --plot} draws the tuning curve.
 */
@Command(
        name = "tune",
        mixinStandardHelpOptions = true,
        sortOptions = false,
        description = {
            "Tune an operator of the workload library or a network; every measurement goes to the log.",
            "Example: kiln tune --op GMM --config 1,128,128,128 --trials 64 --log gmm.jsonl --plot gmm.png"
        })
final class TuneCommand implements Callable<Integer> {

    @ArgGroup(exclusive = true, multiplicity = "1")
    What what = new What();

    static final class What {
        @ArgGroup(exclusive = false)
        WorkloadOptions workload;

        @Option(
                names = "--network",
                paramLabel = "NAME",
                description = "A network instead: resnet50, mobilenetv2, bert, resnet18-small.")
        String network;
    }

    @Mixin
    TargetOptions target = new TargetOptions();

    @Mixin
    ClusterTuneOptions cluster = new ClusterTuneOptions();

    @Option(names = "--trials", description = "Trial budget, counting the log's trials (default: ${DEFAULT-VALUE}).")
    int trials = 200;

    @Option(names = "--per-round", description = "Programs measured per round (default: ${DEFAULT-VALUE}).")
    int perRound = 64;

    @Option(names = "--time-budget", paramLabel = "SECONDS", description = "Stop after this long (default: none).")
    Double timeBudget;

    @Option(names = "--seed", description = "Search seed (default: ${DEFAULT-VALUE}).")
    long seed = 1;

    @Option(names = "--log", description = "Tuning log, JSON lines (default: ${DEFAULT-VALUE}).")
    Path log = Path.of("kiln-tuning.jsonl");

    @Option(
            names = "--check",
            negatable = true,
            description = "Check each program's output against the interpreter while tuning (default: on for "
                    + "workloads of at most 2e8 operations).")
    Boolean check;

    @Option(
            names = "--measure-in-process",
            description = "Measure programs in this JVM instead of a child JVM: starts faster, but a program that "
                    + "crashes takes the run down.")
    boolean inProcess;

    @Option(
            names = "--layout-free",
            description = "Tune with the operator's constant weights layout-free, as ./kiln suite tunes its convs: "
                    + "each program reads them packed in the order of its tiles (packed once, outside the timing; "
                    + "records keyed 'layout_free=[...]'; kiln inspect --layout-free reads them back).")
    boolean layoutFree;

    @Option(names = "--plot", paramLabel = "PNG", description = "Also draw the tuning curve to this PNG.")
    Path plot;

    @Option(
            names = "--progress",
            paramLabel = "MODE",
            description = "auto (a bar on a terminal, else a line every few seconds), bar, lines, none "
                    + "(default: ${DEFAULT-VALUE}).")
    String progress = "auto";

    @Option(names = "--json", description = "Print the result as JSON on standard output.")
    boolean json;

    @Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() throws Exception {
        if (trials < 0) throw new KilnException("--trials must be 0 or more, got " + trials);
        if (perRound < 1) throw new KilnException("--per-round must be at least 1, got " + perRound);
        if (timeBudget != null && !(timeBudget > 0)) {
            throw new KilnException("--time-budget must be positive, got " + timeBudget);
        }
        CliProgress.Mode mode = json && progress.equals("auto") ? CliProgress.Mode.LINES : CliProgress.parse(progress);
        if (log.toAbsolutePath().getParent() != null)
            Files.createDirectories(log.toAbsolutePath().getParent());
        cluster.check();
        if (cluster.enabled() && inProcess) {
            throw new KilnException("--cluster and --measure-in-process exclude each other");
        }
        Target t = target.target();
        return what.network != null ? network(t, mode) : operator(t, mode);
    }

    private int operator(Target t, CliProgress.Mode mode) throws Exception {
        SuiteWorkload w = what.workload.workload();
        ComputeDAG dag = SuiteDags.of(w);
        boolean checkIt = check != null ? check : dag.flopCount() <= 2e8;
        MeasureOptions mo = MeasureOptions.defaults().withCheckCorrectness(checkIt);
        Map<String, Object> out = new LinkedHashMap<>();
        List<String> constants = WorkloadOptions.layoutFree(w, layoutFree);
        String key = AutoSchedule.task(dag, t, constants).workloadKey();
        Measurer inner = measurer(t, mo);
        try (CliProgress m = new CliProgress(inner, w.label(), trials, mode, System.err, 5)) {
            TuneOptions.Builder b = TuneOptions.builder()
                    .trials(trials)
                    .measuresPerRound(Math.max(1, Math.min(perRound, trials)))
                    .seed(seed)
                    .logFile(log)
                    .measureOptions(mo)
                    .measurer(m)
                    .progressBar(false);
            if (timeBudget != null) b.timeBudget(Duration.ofMillis((long) (timeBudget * 1e3)));
            b.layoutFree(constants.toArray(String[]::new));
            try (TuneResult r = AutoSchedule.tune(dag, t, b.build())) {
                out.put("workload", w.label());
                out.put("op", w.op());
                out.put("config", w.config());
                out.put("workloadKey", key);
                out.put("target", t.toString());
                out.put("log", log.toString());
                out.put("trials", r.trials());
                out.put("newTrials", r.newTrials());
                out.put("errors", r.errors());
                out.put("errorsByKind", r.errorsByKind());
                out.put("bestTrial", r.bestTrial());
                out.put("bestSeconds", Json.num(r.seconds()));
                out.put("rate", Json.num(r.gflops()));
                out.put("unit", r.rateUnit());
                out.put("operations", dag.flopCount());
                out.put("stopReason", r.stopReason().toString());
                out.put("notes", r.notes());
                out.put("schedule", Json.MAPPER.readTree(r.schedule().toJson()));
                putCluster(out, inner);
                if (!json) spec.commandLine().getOut().println(w.label() + " on " + t + ":\n" + r.summary());
            }
        }
        if (plot != null) {
            try (TuningLog l = TuningLog.open(log)) {
                TuningCurve c =
                        TuningCurve.fromLog(w.label(), l.records(key, t.toString()), dag.flopCount(), dag.rateUnit());
                CurveChart.write(plot, List.of(c), "kiln tune " + w.label());
            }
            out.put("plot", plot.toString());
            if (!json) spec.commandLine().getOut().println("written " + plot);
        }
        if (json) Json.print(spec.commandLine().getOut(), out);
        return 0;
    }

    /** With --cluster: what the cluster did (programs dispatched and re-queued, results by worker, faults). */
    private static void putCluster(Map<String, Object> out, Measurer m) {
        JobReport r = ClusterTuneOptions.report(m);
        if (r == null) return;
        Map<String, Object> c = new LinkedHashMap<>();
        c.put("dispatched", r.dispatched());
        c.put("completed", r.completed());
        c.put("requeued", r.requeued());
        c.put("byWorker", r.byWorker());
        c.put("faults", r.faults());
        out.put("cluster", c);
    }

    private Measurer measurer(Target t, MeasureOptions mo) {
        if (cluster.enabled()) return cluster.start(t, mo);
        return inProcess ? LocalMeasurer.of(t, mo) : MeasurerProviders.start(t, mo);
    }

    private int network(Target t, CliProgress.Mode mode) throws Exception {
        Graph g = BenchNetworks.graphOf(what.network, seed);
        Map<String, Object> out = new LinkedHashMap<>();
        Measurer inner = measurer(t, MeasureOptions.defaults());
        try (CliProgress m = new CliProgress(inner, what.network, trials, mode, System.err, 5)) {
            NetworkTuneOptions.Builder b = NetworkTuneOptions.builder()
                    .trials(trials)
                    .measuresPerRound(perRound)
                    .seed(seed)
                    .logFile(log)
                    .measurer(m);
            if (timeBudget != null) b.timeBudget(Duration.ofMillis((long) (timeBudget * 1e3)));
            try (CompiledNetwork cn = Network.tune(g, t, b.build())) {
                SchedulerResult r = cn.tuning().orElseThrow();
                double ops = 0;
                for (NetworkTask task : cn.tasks()) ops += (double) task.flops() * task.weight();
                out.put("network", what.network);
                out.put("target", t.toString());
                out.put("log", log.toString());
                out.put("tasks", cn.tasks().size());
                out.put("trials", r.trials());
                out.put("newTrials", r.newTrials());
                out.put("estimatedLatencySeconds", Json.num(r.objective()));
                out.put("rate", Json.num(ops / r.objective() / 1e9));
                out.put("unit", "GFLOP/s");
                out.put("stop", r.stop().toString());
                out.put("notes", cn.notes());
                putCluster(out, inner);
                if (!json) spec.commandLine().getOut().println(r.table() + "\n" + cn.summary());
                if (plot != null) {
                    TuningCurve c = TuningCurve.fromObjective(what.network, r.history(), ops, "GFLOP/s");
                    CurveChart.write(plot, List.of(c), "kiln tune " + what.network);
                    out.put("plot", plot.toString());
                    if (!json) spec.commandLine().getOut().println("written " + plot);
                }
            }
        }
        if (json) Json.print(spec.commandLine().getOut(), out);
        return 0;
    }
}
