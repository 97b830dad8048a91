package dev.kiln.bench.network;

import dev.kiln.autoschedule.measure.MeasureOptions;
import dev.kiln.autoschedule.network.CompiledNetwork;
import dev.kiln.autoschedule.network.Network;
import dev.kiln.autoschedule.network.NetworkProfile;
import dev.kiln.autoschedule.network.NetworkTuneOptions;
import dev.kiln.autoschedule.scheduler.SchedulerResult;
import dev.kiln.autoschedule.scheduler.Strategy;
import dev.kiln.bench.network.TorchNetwork.Format;
import dev.kiln.bench.network.TorchNetwork.Variant;
import dev.kiln.graph.Graph;
import dev.kiln.graph.NodeRunner;
import dev.kiln.graph.ReferenceExecutor;
import dev.kiln.graph.pass.ToBfloat16;
import dev.kiln.ir.DType;
import dev.kiln.ir.KilnException;
import dev.kiln.runtime.Comparison;
import dev.kiln.runtime.NDArray;
import dev.kiln.target.CpuTarget;
import dev.kiln.target.Target;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Locale;

/**
 * What one child JVM of {@link NetworkBench} does (the {@code --child-rows} run): one thread count, every network of
 * {@code --network}, one part. The Kiln part times the compiled network (tuned, built from the log, or untuned; with
 * {@code --unpacked} also on the weights' original layout, with {@code --bf16} also in bfloat16, on {@code --target
 * jvm} also the untuned JVM baseline); the torch part times PyTorch as built and BN folded in each memory format. Every
 * output is checked against the reference run (each node's default lowering), and every row is appended to the rows
 * file as soon as it is measured, so a crash later loses nothing measured. The options are the command's own
 * ({@link NetworkBench}'s fields).
 */
final class NetworkChild {
    private final NetworkBench bench;

    NetworkChild(NetworkBench bench) {
        this.bench = bench;
    }

    /** Times every network of {@code --network} at the one thread count of {@code --threads}; rows to --child-rows. */
    int run() throws IOException {
        int t = bench.threads[0];
        boolean torch = bench.part.equals("torch");
        if (!torch && !bench.part.equals("kiln"))
            throw new KilnException("--part must be kiln or torch, got '" + bench.part + "'");
        if (torch) {
            TorchRuntime.ensureAvailable();
            TorchRuntime.setThreads(t);
            System.out.println("   " + TorchRuntime.ensureAvailable());
            System.out.println("   " + TorchRuntime.threadReport());
        }
        CpuTarget target = bench.fma.apply((bench.jvm() ? Target.jvm() : Target.cpu()).withCores(t));
        System.out.println("   target: " + target);
        Path threadLog = NetworkLogs.logFor(bench.log, t);
        Files.write(bench.childRows, List.of());
        for (String name : bench.networks) {
            Graph g = BenchNetworks.graphOf(name, bench.seed);
            NDArray[] inputs = g.inputs().stream()
                    .map(v -> NDArray.random(DType.FLOAT32, bench.seed + 17, v.dims()))
                    .toArray(NDArray[]::new);
            NDArray want;
            try (NodeRunner ref = NodeRunner.compiled(bench.jvm() ? Target.jvm() : Target.cpu())) {
                want = ReferenceExecutor.run(g, ref, inputs)
                        .getFirst(); // the reference run: each node's default lowering
            }
            if (torch) {
                timeTorch(name, t, g, inputs, want);
            } else {
                System.out.print(
                        Network.partition(g, target).toString().indent(3)); // the fused groups Kiln tunes and runs
                timeKiln(name, t, g, target, threadLog, inputs, want, bench.tolerance, "kiln");
                if (bench.bf16) {
                    ToBfloat16.Result bf = ToBfloat16.apply(g, bench.bf16Activations.activations());
                    boolean narrow = bench.bf16Activations.narrow();
                    System.out.println(
                            "   bfloat16: " + bf.converted().size() + " layer(s) converted; kept in float32: "
                                    + (bf.kept().isEmpty() ? "none" : bf.kept()));
                    timeKiln(
                            name,
                            t,
                            bf.graph(),
                            target,
                            NetworkLogs.withSuffix(threadLog, "-bf16"),
                            inputs,
                            want,
                            bench.bf16Tolerance,
                            narrow ? "kiln bf16-act" : "kiln bf16");
                }
            }
            want.close();
            for (NDArray a : inputs) a.close();
        }
        return 0;
    }

    /**
     * PyTorch as built and BN folded in each format, and, with {@code --bf16}, the BN-folded model in bfloat16
     * ({@code model.to(torch.bfloat16)}: every weight and activation bfloat16, oneDNN's bf16 kernels) checked within
     * {@code --bf16-tolerance}: what a PyTorch user runs to get bfloat16's speed, against Kiln's bf16 row.
     */
    private void timeTorch(String name, int t, Graph g, NDArray[] inputs, NDArray want) throws IOException {
        for (Format f : formats()) {
            String format = formats().size() > 1 || f != Format.CHANNELS_LAST
                    ? " " + f.name().toLowerCase(Locale.ROOT)
                    : "";
            for (Variant v : Variant.values()) {
                timeTorch(name, t, v.label() + format, g, v, f, false, inputs, want, bench.tolerance);
                if (bench.bf16 && v == Variant.BN_FOLDED) {
                    timeTorch(name, t, v.label() + " bf16" + format, g, v, f, true, inputs, want, bench.bf16Tolerance);
                }
            }
        }
    }

    /** One PyTorch row: the network loaded in format {@code f} (in bfloat16 if asked), timed and checked. */
    private void timeTorch(
            String name,
            int t,
            String impl,
            Graph g,
            Variant v,
            Format f,
            boolean bfloat16,
            NDArray[] inputs,
            NDArray want,
            double tol)
            throws IOException {
        try (TorchNetwork pt = TorchNetwork.load(g, v, f, bfloat16)) {
            List<String> nchw = pt.sidestepped();
            String sidestep = nchw.isEmpty()
                    ? ""
                    : nchw.size() + " 1x1 convs run NCHW (oneDNN 3.7 brgemm 1x1 SIGFPE in channels_last)";
            if (!nchw.isEmpty() && !bfloat16)
                System.out.println("   " + impl + ": " + sidestep + ": " + String.join(", ", nchw));
            String note = !bfloat16 ? sidestep : "all ops in bfloat16" + (nchw.isEmpty() ? "" : "; " + sidestep);
            NDArray[] out = new NDArray[1];
            Timing tm = time(() -> {
                List<NDArray> r = pt.run(inputs);
                if (out[0] != null) out[0].close();
                out[0] = r.getFirst();
                for (int i = 1; i < r.size(); i++) r.get(i).close();
            });
            emit(check(name, t, impl, tm, out[0], want, tol, note));
            out[0].close();
        }
    }

    private void timeKiln(
            String name,
            int t,
            Graph g,
            CpuTarget target,
            Path threadLog,
            NDArray[] inputs,
            NDArray want,
            double tol,
            String label)
            throws IOException {
        for (String strategyName : bench.strategies) {
            Strategy strategy = NetworkBench.strategyOf(strategyName);
            String suffix = bench.strategies.size() > 1 ? "-" + strategyName : "";
            Path taskLog = bench.strategies.size() > 1 ? NetworkLogs.withSuffix(threadLog, suffix) : threadLog;
            String kilnNote;
            long t0 = System.nanoTime();
            boolean tuned = false;
            CompiledNetwork cn;
            if (bench.trials > 0) {
                Files.createDirectories(taskLog.toAbsolutePath().getParent());
                Path curve =
                        bench.dir.resolve("curve-" + name + (label.equals("kiln") ? "" : "-" + label.replace(' ', '-'))
                                + "-" + t + "t-" + strategyName + ".tsv");
                NetworkTuneOptions.Builder ob = NetworkTuneOptions.builder()
                        .trials(bench.trials)
                        .seed(bench.seed)
                        .logFile(taskLog)
                        .measuresPerRound(bench.perRound)
                        .strategy(strategy)
                        .timeBudget(Duration.ofSeconds(bench.timeBudget))
                        .scheduler(b -> b.latencyTsv(curve)
                                .measureOptions(MeasureOptions.defaults()
                                        .forTarget(target)
                                        .withRemeasure(bench.remeasureTop, bench.remeasureRounds)
                                        .withFlushCache(bench.flushCache.enabled())));
                PretrainedModels.apply(ob, bench.pretrained);
                if (bench.sharedModel) ob.scheduler(b -> b.sharedCostModel(true));
                ob.transfer(bench.transfer.enabled());
                cn = Network.tune(g, target, ob.build());
                SchedulerResult r = cn.tuning().orElseThrow();
                System.out.println(r.table());
                bench.transfer.printReport(taskLog);
                kilnNote = String.format(
                        Locale.ROOT,
                        "%s, %d trials (%d new, stop %s, %s), %s",
                        strategyName,
                        r.trials(),
                        r.newTrials(),
                        r.stop(),
                        bench.flushCache.describe(),
                        taskLog);
                tuned = true;
            } else if (Files.exists(taskLog)) {
                cn = Network.build(g, target, taskLog);
                kilnNote = "built from " + taskLog;
                tuned = true;
            } else {
                cn = Network.buildUntuned(g, target);
                kilnNote = "UNTUNED (default lowering; no log " + taskLog + ")";
            }
            kilnNote += String.format(
                    Locale.ROOT,
                    ", %d kernel calls, ready in %.1f s",
                    cn.kernelCalls(),
                    (System.nanoTime() - t0) / 1e9);
            String impl = label + (bench.strategies.size() > 1 ? " " + strategyName : "");
            try (cn) {
                timeCompiled(name, t, impl, cn, inputs, want, tol, kilnNote, strategyName);
            }
            if (tuned && bench.unpacked) { // the same programs without the layout rewrite of the weights: what the
                // packing is
                // worth
                try (CompiledNetwork plain = Network.buildWithoutPacking(g, target, taskLog)) {
                    timeCompiled(
                            name,
                            t,
                            impl + " unpacked",
                            plain,
                            inputs,
                            want,
                            tol,
                            "same programs, weights in their original layout",
                            null);
                }
            }
        }
        if (bench.jvm()) { // the pure-Java baseline of --target jvm: every group's default lowering on the JVM backend
            try (CompiledNetwork plain = Network.buildUntuned(g, target)) {
                timeCompiled(
                        name,
                        t,
                        "jvm untuned (baseline)",
                        plain,
                        inputs,
                        want,
                        tol,
                        "default lowering, JVM backend",
                        null);
            }
        }
    }

    private void timeCompiled(
            String name,
            int t,
            String impl,
            CompiledNetwork cn,
            NDArray[] inputs,
            NDArray want,
            double tol,
            String note,
            String strategyName)
            throws IOException {
        NDArray[] outs = cn.graph().outputValues().stream()
                .map(v -> NDArray.allocate(v.dtype(), v.dims()))
                .toArray(NDArray[]::new);
        Timing tm = time(() -> cn.run(inputs, outs));
        if (bench.profile && strategyName != null) {
            NetworkProfile prof = cn.profile(bench.warmup, Math.max(3, bench.repeats), inputs);
            System.out.println("   " + name + " " + t + "t kiln (" + strategyName + "): " + cn.summary());
            System.out.print(prof.table(8).indent(3));
            System.out.println("   kernels against their tuned times, by time lost in the network:");
            System.out.print(prof.degradation(12).indent(3));
            note += String.format(Locale.ROOT, ", outside kernels %.2f%%", 100 * prof.overheadShare());
        }
        emit(check(name, t, impl, tm, outs[0], want, tol, note));
        for (NDArray o : outs) o.close();
    }

    /** Appends a row to the child's rows file at once, so a crash later loses nothing measured. */
    private void emit(String row) throws IOException {
        Files.write(bench.childRows, List.of(row), java.nio.file.StandardOpenOption.APPEND);
    }

    private List<Format> formats() {
        return bench.torchFormats.stream()
                .filter(s -> !s.equals("none"))
                .map(Format::parse)
                .distinct()
                .toList();
    }

    private Timing time(Runnable run) {
        return Timing.of(run, bench.warmup, bench.warmupMs, bench.repeats, bench.minSeconds);
    }

    private String check(
            String net, int t, String impl, Timing tm, NDArray got, NDArray want, double tol, String note) {
        Comparison c = got.compareTo(want, tol, tol);
        String n = c.ok() ? note : (note.isBlank() ? "" : note + "; ") + c;
        String err = String.format(Locale.ROOT, "%.2e", c.maxAbsError());
        return NetworkRows.row(net, t, impl, tm, err, c.ok() ? "ok" : "MISMATCH", n);
    }
}
