package dev.kiln.bench.onnx;

import dev.kiln.autoschedule.network.CompiledNetwork;
import dev.kiln.autoschedule.network.Network;
import dev.kiln.autoschedule.network.VariantComparison;
import dev.kiln.bench.network.NetworkLogs;
import dev.kiln.bench.network.Timing;
import dev.kiln.graph.Graph;
import dev.kiln.ir.KilnException;
import dev.kiln.runtime.Comparison;
import dev.kiln.runtime.NDArray;
import dev.kiln.target.CpuTarget;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * The same-process comparisons {@code ./kiln onnx} runs in a child after its timing, each when its option asks for it:
 * {@code --rounds} (ONNX Runtime and Kiln timed in alternating rounds, Kiln's speed per round), {@code --hold-ab}
 * (the thread pool held awake across a run or not), {@code --cache-ab} (memory reuse and loop split variants) and
 * {@code --log-ab} (the network built from another log). Alternating runs in one process let the host's drift fall on
 * both sides of each comparison. The options are the command's own ({@link OnnxBench}'s fields).
 */
final class OnnxComparisons {
    private final OnnxBench bench;

    OnnxComparisons(OnnxBench bench) {
        this.bench = bench;
    }

    /**
     * {@code --rounds}: rounds 2 to N of ONNX Runtime's block (a session of its own, closed before Kiln's threads run,
     * as in the first round) then Kiln's, each timed as the first round's; a table of the rounds and Kiln's speed
     * (ONNX Runtime's median over Kiln's) per round, with the median of those ratios.
     */
    String rounds(byte[] bytes, int t, Graph g, NDArray[] inputs, Timing ort1, Timing kiln1, Runnable kiln) {
        List<Timing> ort = new ArrayList<>(List.of(ort1));
        List<Timing> kl = new ArrayList<>(List.of(kiln1));
        for (int r = 1; r < bench.rounds; r++) {
            try (OrtSessionRunner o = new OrtSessionRunner(bytes, t, g.inputs(), inputs)) {
                ort.add(Timing.of(o::runOnly, bench.warmup, bench.warmupMs, bench.repeats, bench.minSeconds));
            }
            kl.add(Timing.of(kiln, bench.warmup, bench.warmupMs, bench.repeats, bench.minSeconds));
        }
        StringBuilder sb = new StringBuilder(String.format(
                Locale.ROOT,
                "ONNX Runtime and Kiln in %d alternating rounds (medians, ms):%n%-6s %12s %10s %9s %-15s%n",
                bench.rounds,
                "round",
                "onnxruntime",
                "kiln",
                "speed",
                "load before"));
        double[] ratio = new double[bench.rounds];
        for (int r = 0; r < bench.rounds; r++) {
            ratio[r] = ort.get(r).medianMs() / kl.get(r).medianMs();
            sb.append(String.format(
                    Locale.ROOT,
                    "%-6d %12.3f %10.3f %8.3fx %-15s%n",
                    r + 1,
                    ort.get(r).medianMs(),
                    kl.get(r).medianMs(),
                    ratio[r],
                    ort.get(r).loadBefore()));
        }
        sb.append(String.format(
                Locale.ROOT,
                "Kiln's speed over the rounds: median %.3fx (%.3fx to %.3fx); %d of %d rounds at least ONNX Runtime's"
                        + "%n",
                OrtProfile.median(ratio),
                Arrays.stream(ratio).min().getAsDouble(),
                Arrays.stream(ratio).max().getAsDouble(),
                Arrays.stream(ratio).filter(x -> x >= 1).count(),
                bench.rounds));
        return sb.toString();
    }

    /** {@code --hold-ab}: the thread pool held awake across a run (the default) or not, runs alternating. */
    void hold(CompiledNetwork cn, NDArray[] inputs) {
        System.out.println("   same-process A/B, thread pool held awake across a run or not (" + bench.holdAb
                + " runs each, alternating):");
        System.out.print(
                cn.compareHold(bench.warmup, bench.holdAb, inputs).describe().indent(3));
    }

    /**
     * {@code --cache-ab}: the network as built, with RECENT memory reuse, and at 2+ threads both with one chunk per
     * thread ({@link CacheVariants}), runs rotating.
     */
    void cache(CompiledNetwork cn, CpuTarget target, NDArray[] inputs) {
        System.out.println("   same-process comparison of memory reuse and loop split (" + bench.cacheAb
                + " runs each, rotating):");
        System.out.print(cn.compare(bench.warmup, bench.cacheAb, inputs, CacheVariants.of(cn, target))
                .describe()
                .indent(3));
    }

    /**
     * {@code --log-ab}: the network built from the other log, its output checked against ONNX Runtime's, then both
     * networks' runs alternating in this process ({@link CompiledNetwork#compare}).
     */
    void logs(
            Graph g,
            CpuTarget target,
            CompiledNetwork cn,
            Path threadLog,
            NDArray[] inputs,
            List<NDArray> want,
            int t) {
        Path other = NetworkLogs.logFor(bench.logAb, t);
        try (CompiledNetwork b = Network.build(g, target, other)) {
            List<NDArray> outs = b.runAll(inputs);
            for (int i = 0; i < outs.size(); i++) {
                Comparison c = bench.againstOrt(outs.get(i), want.get(i));
                if (!c.ok())
                    throw new KilnException("--log-ab: the network built from " + other + " gives output '"
                            + g.outputs().get(i) + "' unlike ONNX Runtime's: " + c);
            }
            System.out.printf(
                    Locale.ROOT,
                    "   same-process comparison of two logs (%d runs each, alternating; output of B checked): A %s,"
                            + " B %s%n",
                    bench.abRuns,
                    threadLog,
                    other);
            VariantComparison vc = cn.compare(
                    bench.warmup,
                    bench.abRuns,
                    inputs,
                    List.of(cn.asBuilt().named("A: " + threadLog), b.asBuilt().named("B: " + other)));
            System.out.print(vc.describe().indent(3));
            System.out.println("   the calls that differ most (medians of the runs timed call by call):");
            System.out.print(vc.callDifferences(1, cn.callLabels(), 15).indent(3));
        }
    }
}
