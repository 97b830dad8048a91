package dev.kiln.bench.onnx;

import dev.kiln.autoschedule.measure.MeasureOptions;
import dev.kiln.autoschedule.network.CompiledNetwork;
import dev.kiln.autoschedule.network.Network;
import dev.kiln.autoschedule.network.NetworkProfile;
import dev.kiln.autoschedule.network.NetworkTuneOptions;
import dev.kiln.autoschedule.scheduler.SchedulerResult;
import dev.kiln.bench.ChildJvm;
import dev.kiln.bench.network.BenchHost;
import dev.kiln.bench.network.Bf16ActivationsOption;
import dev.kiln.bench.network.FlushCacheOption;
import dev.kiln.bench.network.FmaOption;
import dev.kiln.bench.network.NetworkLogs;
import dev.kiln.bench.network.PretrainedModels;
import dev.kiln.bench.network.Timing;
import dev.kiln.bench.network.TransferOption;
import dev.kiln.graph.Graph;
import dev.kiln.graph.Op;
import dev.kiln.graph.Value;
import dev.kiln.graph.pass.ToBfloat16;
import dev.kiln.ir.DType;
import dev.kiln.ir.KilnException;
import dev.kiln.onnx.ModelWriter;
import dev.kiln.onnx.OnnxImporter;
import dev.kiln.onnx.OnnxZoo;
import dev.kiln.onnx.proto.Onnx.ModelProto;
import dev.kiln.runtime.Comparison;
import dev.kiln.runtime.NDArray;
import dev.kiln.target.CpuTarget;
import dev.kiln.target.Target;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code ./kiln onnx MODEL.onnx}: imports an ONNX model, tunes it within a budget (or builds it from
 * its tuning log, without search, when the log exists), and times it against ONNX Runtime on the
 * same file and inputs, one child JVM per thread count (load average printed before each), the
 * outputs checked against ONNX Runtime's. The comparisons a child may run after its timing are
 * {@link OnnxComparisons}; its table is {@link OnnxRows}.
 */
@Command(
        name = "kiln onnx",
        mixinStandardHelpOptions = true,
        description =
                "Import an ONNX model, tune it (or apply its tuning log), and time it against ONNX Runtime in the "
                        + "same run.")
public final class OnnxBench implements Callable<Integer> {

    @Parameters(
            index = "0",
            paramLabel = "MODEL",
            description = "The .onnx file (float32 or integer inputs, opset 13-21).")
    Path model;

    @Option(
            names = "--zoo",
            description = "Write this model to MODEL first if MODEL does not exist: resnet50, mobilenetv2, bert "
                    + "(one encoder layer), bert-base (12 layers with embeddings, int64 token ids), qmlp (a quantised "
                    + "MLP), qcnn (a quantised CNN: three QLinearConv), qbert (a BERT layer with ONNX Runtime's "
                    + "dynamic int8 quantisation), qdq-resnet50 and qdq-resnet50-u8 (ResNet-50 statically quantised "
                    + "in QDQ form, int8 or uint8 activations), qdq-mobilenetv2 and qdq-mobilenetv2-u8 (MobileNet-V2 "
                    + "the same) (seeded random weights).")
    String zoo;

    @Option(
            names = "--dim",
            split = ",",
            description = "Bind symbolic input extents, NAME=N (default: ${DEFAULT-VALUE}).")
    Map<String, Long> dims = new LinkedHashMap<>(Map.of("batch", 1L));

    @Option(names = "--threads", split = ",", description = "Thread counts, one child JVM each (default: 1,2).")
    int[] threads = {1, 2};

    @Option(names = "--trials", description = "Tuning trials over all tasks (default: ${DEFAULT-VALUE}).")
    int trials = 2000;

    @Option(
            names = "--time-budget",
            description = "Tuning time limit per thread count, in seconds (0: none; default: ${DEFAULT-VALUE}).")
    long timeBudget = 600;

    @Mixin
    FlushCacheOption flushCache = new FlushCacheOption();

    @Mixin
    TransferOption transfer = new TransferOption();

    @Mixin
    FmaOption fma = new FmaOption();

    @Option(names = "--per-round", description = "Programs measured per task per round (default: ${DEFAULT-VALUE}).")
    int perRound = 16;

    @Option(
            names = "--log",
            description = "Tuning log; '-<n>t' is added per thread count (default: MODEL with .jsonl).")
    Path log;

    @Option(names = "--retune", description = "Search even when the log exists (it resumes from the log).")
    boolean retune;

    @Option(
            names = "--pretrained",
            description = "The cost model's start when tuning: 'bundled' (the model shipped with Kiln, the default), "
                    + "a file written by ./kiln pretrain, or 'none' (the learned model alone).")
    String pretrained = "bundled";

    @Option(
            names = "--repeats",
            description = "At least this many timed runs per implementation (default: ${DEFAULT-VALUE}).")
    int repeats = 20;

    @Option(names = "--warmup", description = "Untimed runs first (default: ${DEFAULT-VALUE}).")
    int warmup = 3;

    @Option(
            names = "--warmup-ms",
            description = "Then a warm-up by time, until run times settle, of at most this many ms (default: "
                    + "${DEFAULT-VALUE}).")
    double warmupMs = 500;

    @Option(
            names = "--min-seconds",
            description = "Timed runs go on until at least this many seconds (default: ${DEFAULT-VALUE}).")
    double minSeconds = 2;

    @Option(
            names = "--tolerance",
            description = "Output check against ONNX Runtime, abs and rel (default: ${DEFAULT-VALUE}).")
    double tolerance = 1e-3;

    @Option(
            names = "--bf16",
            description = "Kiln runs the model with its convs and dense layers in bfloat16 (ToBfloat16: bfloat16 "
                    + "weights and operands, float32 sums; its own log, '-bf16'), checked against ONNX Runtime's "
                    + "float32 outputs within --tolerance (give it 0.05).")
    boolean bf16;

    @Mixin
    Bf16ActivationsOption bf16Activations = new Bf16ActivationsOption();

    @Option(names = "--seed", description = "Input (and --zoo weight) seed (default: ${DEFAULT-VALUE}).")
    long seed = 1;

    @Option(
            names = "--int-high",
            description =
                    "Integer inputs are uniform in [0, N) (default: ${DEFAULT-VALUE}, valid token ids and masks).")
    long intHigh = 2;

    @Option(
            names = "--profile",
            description = "After timing, profile Kiln's run: each kernel's time in the network against its tuned time "
                    + "from the log, sorted by time lost, and the thread pool's sleeps per run; then each kernel "
                    + "against the ONNX Runtime nodes that compute the same values (ONNX Runtime's own profile).")
    boolean profile;

    /** Runs of ONNX Runtime's profiling session ({@code --profile}). */
    private static final int PROFILE_RUNS = 50;

    @Option(
            names = "--hold-ab",
            description = "After timing, a same-process A/B of N runs each with the thread pool held awake across a "
                    + "run (the default) and not held, alternating (0: none; default: ${DEFAULT-VALUE}).")
    int holdAb;

    @Option(
            names = "--cache-ab",
            description = "After timing, a same-process comparison of N runs each, alternating: the network as "
                    + "built, its intermediate memory planned with RECENT reuse (outputs in the blocks freed last), "
                    + "and at 2+ threads both with 1 chunk per thread (each parallel loop cut in contiguous halves) "
                    + "instead of the default (0: none; default: ${DEFAULT-VALUE}).")
    int cacheAb;

    @Option(
            names = "--log-ab",
            paramLabel = "LOG",
            description = "After timing, a same-process comparison of the network built from --log against the one "
                    + "built from LOG ('-<n>t' added per thread count, as --log), their runs alternating, with each "
                    + "kernel call's median where the two differ most (needs --ab-runs).")
    Path logAb;

    @Option(
            names = "--rounds",
            description = "Time ONNX Runtime and Kiln in this many alternating rounds (a fresh ONNX Runtime session "
                    + "each round, closed before Kiln's block) and print Kiln's speed per round: the host's drift "
                    + "over a child falls on both sides of each ratio. The table's rows stay the first round's "
                    + "(default: ${DEFAULT-VALUE}).")
    int rounds = 1;

    @Option(
            names = "--ab-runs",
            description = "Runs of each network in the --log-ab comparison (default: ${DEFAULT-VALUE}).")
    int abRuns = 40;

    @picocli.CommandLine.Mixin
    dev.kiln.bench.cluster.ClusterTuneOptions cluster = new dev.kiln.bench.cluster.ClusterTuneOptions();

    @Option(names = "--child", hidden = true, description = "Internal: run one thread count in this JVM.")
    boolean child;

    public static void main(String[] args) {
        System.exit(new CommandLine(new OnnxBench())
                .setOverwrittenOptionsAllowed(true)
                .setExecutionExceptionHandler((e, cl, parsed) -> { // bad input: its message, not a stack trace
                    if (!(e instanceof KilnException) && !(e instanceof java.io.UncheckedIOException)) throw e;
                    cl.getErr()
                            .println("kiln onnx: " + e.getMessage()
                                    + (e.getCause() != null && e instanceof java.io.UncheckedIOException
                                            ? " (" + e.getCause().getMessage() + ")"
                                            : ""));
                    return 2;
                })
                .execute(args));
    }

    @Override
    public Integer call() throws Exception {
        if (log == null)
            log = model.resolveSibling(model.getFileName().toString().replaceFirst("\\.onnx$", "") + ".jsonl");
        cluster.check();
        if (rounds < 1) throw new KilnException("--rounds must be at least 1, got " + rounds);
        if (child) return child(threads[0]);
        if (zoo != null && !Files.exists(model)) {
            ModelWriter w =
                    switch (zoo) {
                        case "resnet50" -> OnnxZoo.resnet50(224, seed);
                        case "mobilenetv2" -> OnnxZoo.mobilenetV2(224, seed);
                        case "bert" -> OnnxZoo.bertLayer(128, seed);
                        case "bert-base" -> OnnxZoo.bertBase(128, seed);
                        case "qmlp" -> OnnxZoo.quantizedMlp("qmlp", 784, 512, 10, seed);
                        case "qcnn" -> OnnxZoo.quantizedCnn("qcnn", 64, 112, seed);
                        case "qbert" -> OnnxZoo.dynamicQuantizedBertLayer(128, seed);
                        case "qdq-resnet50" -> OnnxZoo.qdqResnet50(224, DType.INT8, seed);
                        case "qdq-resnet50-u8" -> OnnxZoo.qdqResnet50(224, DType.UINT8, seed);
                        case "qdq-mobilenetv2" -> OnnxZoo.qdqMobilenetV2(224, DType.INT8, seed);
                        case "qdq-mobilenetv2-u8" -> OnnxZoo.qdqMobilenetV2(224, DType.UINT8, seed);
                        default ->
                            throw new KilnException("--zoo: unknown model '" + zoo
                                    + "' (resnet50, mobilenetv2, bert, bert-base, qmlp, qcnn, qbert, "
                                    + "qdq-resnet50, qdq-resnet50-u8, qdq-mobilenetv2, qdq-mobilenetv2-u8)");
                    };
            w.write(model);
            System.out.println("written " + model + " (" + zoo + ", seeded random weights)");
        }
        Graph g = OnnxImporter.load(model, dims); // fail early, in the parent, on a model Kiln cannot read
        System.out.printf(
                Locale.ROOT,
                "%s: %d nodes, %d inputs %s, %d outputs, %.1f MB of weights%n",
                model,
                g.nodes().size(),
                g.inputs().size(),
                g.inputs(),
                g.outputs().size(),
                g.constantBytes() / 1e6);
        boolean ok = true;
        for (int t : threads) {
            List<String> cmd = ChildJvm.command(OnnxBench.class);
            cmd.addAll(List.of(
                    model.toString(),
                    "--child",
                    "--threads",
                    String.valueOf(t),
                    "--trials",
                    String.valueOf(trials),
                    "--time-budget",
                    String.valueOf(timeBudget),
                    "--per-round",
                    String.valueOf(perRound),
                    "--log",
                    log.toString(),
                    "--repeats",
                    String.valueOf(repeats),
                    "--warmup",
                    String.valueOf(warmup),
                    "--warmup-ms",
                    String.valueOf(warmupMs),
                    "--min-seconds",
                    String.valueOf(minSeconds),
                    "--tolerance",
                    String.valueOf(tolerance),
                    "--seed",
                    String.valueOf(seed),
                    "--int-high",
                    String.valueOf(intHigh)));
            dims.forEach((k, v) -> cmd.addAll(List.of("--dim", k + "=" + v)));
            cmd.addAll(cluster.args());
            if (retune) cmd.add("--retune");
            if (bf16) {
                cmd.add("--bf16");
                cmd.addAll(bf16Activations.args());
            }
            cmd.addAll(List.of("--pretrained", pretrained));
            cmd.add(transfer.arg());
            cmd.add(fma.arg());
            cmd.add(flushCache.arg());
            if (profile) cmd.add("--profile");
            if (holdAb > 0) cmd.addAll(List.of("--hold-ab", String.valueOf(holdAb)));
            if (cacheAb > 0) cmd.addAll(List.of("--cache-ab", String.valueOf(cacheAb)));
            if (rounds > 1) cmd.addAll(List.of("--rounds", String.valueOf(rounds)));
            if (logAb != null) cmd.addAll(List.of("--log-ab", logAb.toString(), "--ab-runs", String.valueOf(abRuns)));
            ProcessBuilder pb = new ProcessBuilder(cmd).inheritIO();
            pb.environment().put("OMP_NUM_THREADS", String.valueOf(t));
            System.out.printf(Locale.ROOT, "== %d thread(s): child JVM; load %s%n", t, BenchHost.loadAverage());
            int rc = pb.start().waitFor();
            if (rc != 0) {
                ok = false;
                System.out.println("the child for " + t + " thread(s) exited with " + rc);
            }
        }
        return ok ? 0 : 1;
    }

    private int child(int t) throws Exception {
        Graph g = OnnxImporter.load(model, dims);
        if (bf16) {
            ToBfloat16.Result bf = ToBfloat16.apply(g, bf16Activations.activations());
            System.out.println("   bfloat16: " + bf.converted().size() + " layer(s) converted; kept in float32: "
                    + (bf.kept().isEmpty() ? "none" : bf.kept()));
            g = bf.graph();
        }
        byte[] bytes = Files.readAllBytes(model);
        NDArray[] inputs = g.inputs().stream().map(this::input).toArray(NDArray[]::new);
        List<String> rows = new ArrayList<>();
        // ONNX Runtime's outputs first (the reference); it is timed after Kiln's build or tuning, right before Kiln,
        // in a session of its own closed before Kiln runs, so its spinning threads do not share the cores
        List<NDArray> want;
        try (OrtSessionRunner ort = new OrtSessionRunner(bytes, t, g.inputs(), inputs)) {
            want = ort.run(g.outputValues());
        }
        // its per-node profile in a session of its own, before Kiln's threads start (compared after Kiln's profile)
        OrtProfile ortProfile = profile ? OrtProfile.measure(bytes, t, g.inputs(), inputs, PROFILE_RUNS) : null;
        CpuTarget target = fma.apply(Target.cpu().withCores(t));
        Path threadLog = NetworkLogs.logFor(log, t);
        if (bf16) threadLog = NetworkLogs.withSuffix(threadLog, "-bf16");
        long t0 = System.nanoTime();
        StringBuilder how = new StringBuilder();
        CompiledNetwork cn = compile(g, target, threadLog, how);
        String note = how.toString();
        note += String.format(
                Locale.ROOT, ", %d kernel calls, ready in %.1f s", cn.kernelCalls(), (System.nanoTime() - t0) / 1e9);
        OnnxComparisons comparisons = new OnnxComparisons(this);
        try (cn) {
            Timing ortTime;
            try (OrtSessionRunner ort = new OrtSessionRunner(bytes, t, g.inputs(), inputs)) {
                ortTime = Timing.of(ort::runOnly, warmup, warmupMs, repeats, minSeconds);
                rows.add(OnnxRows.row(
                        t,
                        "onnxruntime " + ortVersion(),
                        ortTime,
                        "-",
                        "reference",
                        "default CPU EP, ALL_OPT, intra-op threads " + t + "; timed after Kiln's build, before Kiln"));
            }
            NDArray[] outs = g.outputValues().stream()
                    .map(v -> NDArray.allocate(v.dtype(), v.dims()))
                    .toArray(NDArray[]::new);
            Timing tm = Timing.of(() -> cn.run(inputs, outs), warmup, warmupMs, repeats, minSeconds);
            String err = "-", check = "ok";
            for (int i = 0; i < outs.length; i++) {
                Comparison c = againstOrt(outs[i], want.get(i));
                err = String.format(Locale.ROOT, "%.2e", c.maxAbsError());
                if (!c.ok()) {
                    check = "MISMATCH";
                    note += "; output '" + g.outputs().get(i) + "': " + c;
                }
            }
            boolean quantises = g.nodes().stream()
                    .anyMatch(n -> n.op() instanceof Op.DynamicQuantParams || n.op() instanceof Op.Quantize);
            if (check.equals("MISMATCH") && quantises) {
                note += " (the model quantises computed values, QuantizeLinear or DynamicQuantizeLinear: a float's "
                        + "last bit, summed in another order or fused into an FMA, can move a value across an 8-bit "
                        + "rounding step, so outputs a step apart are expected; docs/PERFORMANCE.md checks such "
                        + "models with --tolerance 0.05)";
            }
            rows.add(OnnxRows.row(t, bf16 ? "kiln bf16" : "kiln", tm, err, check, note));
            System.out.println("   " + cn.summary());
            if (rounds > 1) {
                System.out.print(comparisons
                        .rounds(bytes, t, g, inputs, ortTime, tm, () -> cn.run(inputs, outs))
                        .indent(3));
            }
            if (profile) {
                NetworkProfile prof = cn.profile(warmup, Math.max(3, repeats), inputs);
                System.out.print(prof.table(8).indent(3));
                System.out.println("   kernels against their tuned times, by time lost in the network:");
                System.out.print(prof.degradation(15).indent(3));
                System.out.printf(
                        Locale.ROOT,
                        "   kernels against ONNX Runtime's own per-node profile (%d profiled runs, medians), by time"
                                + " lost:%n",
                        PROFILE_RUNS);
                System.out.print(ortProfile
                        .compare(ModelProto.parseFrom(bytes), prof, cn.partition(), 20)
                        .indent(3));
            }
            if (holdAb > 0) comparisons.hold(cn, inputs);
            if (cacheAb > 0) comparisons.cache(cn, target, inputs);
            if (logAb != null) comparisons.logs(g, target, cn, threadLog, inputs, want, t);
        }
        OnnxRows.print(rows);
        return rows.stream().anyMatch(r -> r.contains("MISMATCH")) ? 1 : 0;
    }

    /** Kiln's output against ONNX Runtime's: within --tolerance (abs and rel), integer outputs exactly. */
    Comparison againstOrt(NDArray out, NDArray want) {
        double tol = out.dtype().isFloat() ? tolerance : 0;
        return out.compareTo(want, tol, tol);
    }

    /** Builds from the log when it covers the model (and --retune is off), else tunes; {@code how} says which. */
    private CompiledNetwork compile(Graph g, CpuTarget target, Path threadLog, StringBuilder how)
            throws java.io.IOException {
        if (Files.exists(threadLog) && !retune) {
            try {
                CompiledNetwork cn = Network.build(g, target, threadLog);
                how.append("built from ").append(threadLog).append(" (no search; --retune to search on)");
                return cn;
            } catch (KilnException e) { // a log of another model, or of too short a search: say so, then tune
                String why = e.getMessage().lines().findFirst().orElse("");
                System.out.println("   the log does not cover this model (" + why + "); tuning, resuming from it");
                how.append("the log did not cover every task, so tuned; ");
            }
        }
        System.out.print(Network.partition(g, target).toString().indent(3));
        Path dir = threadLog.toAbsolutePath().getParent();
        if (dir != null) Files.createDirectories(dir);
        NetworkTuneOptions.Builder tuning = NetworkTuneOptions.builder()
                .trials(trials)
                .seed(seed)
                .logFile(threadLog)
                .measuresPerRound(perRound)
                .timeBudget(Duration.ofSeconds(timeBudget))
                .scheduler(b -> b.measureOptions(MeasureOptions.defaults().withFlushCache(flushCache.enabled())))
                .verbose(true)
                .transfer(transfer.enabled());
        PretrainedModels.apply(tuning, pretrained);
        if (cluster.enabled()) tuning.measurers(cluster::start); // measured on the cluster's workers of the target
        CompiledNetwork cn = Network.tune(g, target, tuning.build());
        SchedulerResult r = cn.tuning().orElseThrow();
        System.out.println(r.table());
        transfer.printReport(threadLog);
        how.append(String.format(
                Locale.ROOT,
                "tuned: %d trials (%d new, stop %s, %s), log %s",
                r.trials(),
                r.newTrials(),
                r.stop(),
                flushCache.describe(),
                threadLog));
        return cn;
    }

    /**
     * A seeded input: floats uniform in [-1, 1), integers (token ids, masks, 8-bit data) uniform in [0, --int-high).
     */
    private NDArray input(Value v) {
        if (v.dtype().isFloat()) return NDArray.random(v.dtype(), seed + 17, v.dims());
        NDArray a = NDArray.allocate(v.dtype(), v.dims());
        SplittableRandom r = new SplittableRandom(seed + 17);
        if (intHigh < 1) throw new KilnException("--int-high must be at least 1, got " + intHigh);
        long hi = v.dtype().maxInt() < intHigh ? v.dtype().maxInt() + 1 : intHigh;
        for (long i = 0; i < a.numElements(); i++) a.setLongFlat(r.nextLong(0, hi), i);
        return a;
    }

    private static String ortVersion() {
        String v = ai.onnxruntime.OrtEnvironment.class.getPackage().getImplementationVersion();
        return v == null ? "" : v;
    }
}
