package dev.kiln.bench.cli;

import dev.kiln.autoschedule.network.CompiledNetwork;
import dev.kiln.autoschedule.network.Network;
import dev.kiln.autoschedule.network.NetworkTask;
import dev.kiln.autoschedule.tune.AutoSchedule;
import dev.kiln.bench.network.BenchNetworks;
import dev.kiln.bench.suite.KernelTimer;
import dev.kiln.bench.suite.SuiteDags;
import dev.kiln.bench.suite.SuiteWorkload;
import dev.kiln.graph.Graph;
import dev.kiln.graph.Value;
import dev.kiln.ir.KilnException;
import dev.kiln.lower.LowerDefault;
import dev.kiln.runtime.Comparison;
import dev.kiln.runtime.NDArray;
import dev.kiln.target.Backend;
import dev.kiln.target.CompiledKernel;
import dev.kiln.target.Target;
import dev.kiln.te.ComputeDAG;
import dev.kiln.te.Tensor;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code kiln apply}: builds the best logged program of an operator ({@link AutoSchedule#build})
 * or a network ({@link Network#build}) without searching, runs it on seeded random inputs, checks
 * an operator's output against Kiln's default lowering, and times it.
 */
@Command(
        name = "apply",
        mixinStandardHelpOptions = true,
        sortOptions = false,
        description = {
            "Build the best program of a tuning log (no search), check it and time it.",
            "Example: kiln apply --op GMM --config 1,128,128,128 --log gmm.jsonl"
        })
final class ApplyCommand implements Callable<Integer> {

    @ArgGroup(exclusive = true, multiplicity = "1")
    TuneCommand.What what = new TuneCommand.What();

    @Mixin
    TargetOptions target = new TargetOptions();

    @Option(names = "--log", required = true, description = "The tuning log to build from.")
    Path log;

    @Option(names = "--repeats", description = "Timed samples (default: ${DEFAULT-VALUE}).")
    int repeats = 10;

    @Option(names = "--tolerance", description = "Output check, absolute and relative (default: ${DEFAULT-VALUE}).")
    double tolerance = 2e-3;

    @Option(names = "--seed", description = "Input seed (default: ${DEFAULT-VALUE}).")
    long seed = 1;

    @Option(names = "--json", description = "Print the result as JSON on standard output.")
    boolean json;

    @Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() {
        if (!Files.isRegularFile(log)) throw new KilnException("--log: " + log + " does not exist");
        if (repeats < 1) throw new KilnException("--repeats must be at least 1, got " + repeats);
        KernelTimer timer = new KernelTimer(3, 0.2, repeats, 0.01);
        Target t = target.target();
        Map<String, Object> out = what.network != null ? network(t, timer) : operator(t, timer);
        if (json) {
            Json.print(spec.commandLine().getOut(), out);
        } else {
            spec.commandLine()
                    .getOut()
                    .printf(
                            Locale.ROOT,
                            "%s on %s, built from %s: median %.4f ms (min %.4f, p90 %.4f), %.2f %s%s%n",
                            out.get("name"),
                            t,
                            log,
                            out.get("medianMs"),
                            out.get("minMs"),
                            out.get("p90Ms"),
                            out.get("rate"),
                            out.get("unit"),
                            out.containsKey("maxAbsError") ? ", output checked: " + out.get("check") : "");
        }
        return Boolean.FALSE.equals(out.get("ok")) ? 1 : 0;
    }

    private Map<String, Object> operator(Target t, KernelTimer timer) {
        SuiteWorkload w = what.workload.workload();
        ComputeDAG dag = SuiteDags.of(w);
        List<Tensor> params = dag.arguments();
        NDArray[] args = new NDArray[params.size()];
        for (int i = 0; i < params.size(); i++) {
            Tensor p = params.get(i);
            args[i] = p.isPlaceholder()
                    ? NDArray.random(p.dtype(), seed + i, p.shape().toArray())
                    : NDArray.allocate(p.dtype(), p.shape().toArray());
        }
        Map<String, Object> out = new LinkedHashMap<>();
        Tensor last = params.getLast();
        try (CompiledKernel k = AutoSchedule.build(dag, t, log);
                NDArray want = NDArray.allocate(last.dtype(), last.shape().toArray())) {
            KernelTimer.Timing tm = timer.time(() -> k.call(args));
            NDArray[] refArgs = args.clone();
            refArgs[refArgs.length - 1] = want;
            Target cpu = Target.cpu();
            try (CompiledKernel ref = Backend.forTarget(cpu).compile(LowerDefault.lower("reference", dag), cpu)) {
                ref.call(refArgs);
            }
            Comparison c = args[args.length - 1].compareTo(want, tolerance, tolerance);
            out.put("name", w.label());
            out.put("target", t.toString());
            out.put("log", log.toString());
            out.put("medianMs", tm.medianMs());
            out.put("minMs", tm.minMs());
            out.put("p90Ms", tm.p90Ms());
            out.put("calls", tm.calls());
            out.put("rate", dag.flopCount() / (tm.medianMs() / 1e3) / 1e9);
            out.put("unit", dag.rateUnit());
            out.put("ok", c.ok());
            out.put("maxAbsError", Json.num(c.maxAbsError()));
            out.put("check", c.ok() ? "ok" : c.report());
        } finally {
            for (NDArray a : args) a.close();
        }
        return out;
    }

    private Map<String, Object> network(Target t, KernelTimer timer) {
        Graph g = BenchNetworks.graphOf(what.network, seed);
        NDArray[] inputs = g.inputs().stream()
                .map(v -> NDArray.random(v.dtype(), seed + 17, v.dims()))
                .toArray(NDArray[]::new);
        List<Value> outs = g.outputValues();
        NDArray[] outputs =
                outs.stream().map(v -> NDArray.allocate(v.dtype(), v.dims())).toArray(NDArray[]::new);
        Map<String, Object> out = new LinkedHashMap<>();
        try (CompiledNetwork cn = Network.build(g, t, log)) {
            KernelTimer.Timing tm = timer.time(() -> cn.run(inputs, outputs));
            double ops = 0;
            for (NetworkTask task : cn.tasks()) ops += (double) task.flops() * task.weight();
            out.put("name", what.network);
            out.put("target", t.toString());
            out.put("log", log.toString());
            out.put("medianMs", tm.medianMs());
            out.put("minMs", tm.minMs());
            out.put("p90Ms", tm.p90Ms());
            out.put("calls", tm.calls());
            out.put("rate", ops / (tm.medianMs() / 1e3) / 1e9);
            out.put("unit", "GFLOP/s");
            out.put("kernelCalls", cn.kernelCalls());
            out.put("notes", cn.notes());
        } finally {
            for (NDArray a : inputs) a.close();
            for (NDArray a : outputs) a.close();
        }
        return out;
    }
}
