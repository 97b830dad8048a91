package dev.kiln.bench.network;

import dev.kiln.autoschedule.measure.CallTimer;
import dev.kiln.autoschedule.measure.MeasureOptions;
import dev.kiln.autoschedule.network.Network;
import dev.kiln.autoschedule.scheduler.Strategy;
import dev.kiln.bench.ChildJvm;
import dev.kiln.bench.network.TorchNetwork.Variant;
import dev.kiln.ir.KilnException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * Whole networks, Kiln against PyTorch: {@code ./kiln network-bench [options]}. For each network
 * and thread count it times, in one process, PyTorch eager as built ({@link TorchNetwork},
 * {@link Variant#AS_BUILT}), PyTorch with batch norm folded into the convs
 * ({@link Variant#BN_FOLDED}), and Kiln's compiled network ({@link Network#tune} with
 * {@code --trials}, or {@link Network#build} from the log when {@code --trials 0} and the log
 * exists, else {@link Network#buildUntuned}). Each is timed as a user runs it ({@link CallTimer}):
 * {@code --warmup} runs, a warm-up by time of at most {@code --warmup-ms} that stops once the run
 * times settle, then runs back to back until there are {@code --repeats} of them and
 * {@code --min-seconds}; the table gives the median, the minimum and the p10-p90 spread. Outputs are checked against
 * PyTorch as built ({@code |got - want| <= tol + tol |want|}, {@code --tolerance}); a mismatch is marked in the
 * table and makes the command exit 1.
 *
 * <p>Threads: each thread count runs in its own child JVM started with {@code OMP_NUM_THREADS},
 * {@code OPENBLAS_NUM_THREADS} set to it (and {@code OPENBLAS_CORETYPE}: {@code --openblas-coretype},
 * else the environment's, else {@code SkylakeX} on AVX-512 hosts, which OpenBLAS does not detect by
 * itself; libtorch's matmul and linear run in OpenBLAS, so this decides BERT's PyTorch numbers), because OpenMP and
 * OpenBLAS read them once at start (see {@link TorchNetwork}); in the child, libtorch's and OpenBLAS's pools are also
 * set in-process and Kiln's target gets that many cores. The load average is printed before and after each run,
 * as numbers taken while other processes run are not comparable. The table is printed and written
 * as TSV to {@code --dir}. The tuning log of thread count {@code n} is {@code --log} with
 * {@code -<n>t} before its extension (programs tuned for one thread count are not the best for another:
 * {@link NetworkLogs}).
 *
 * <p>This class is the command: its options, and the parent that starts the children ({@link NetworkChildCommand})
 * and gathers their rows ({@link NetworkRows}); what a child times is {@link NetworkChild}.
 */
@Command(
        name = "kiln network-bench",
        mixinStandardHelpOptions = true,
        description =
                "Whole networks: PyTorch eager (as built, BN folded) against Kiln's compiled network, 1 and 2 threads.")
public final class NetworkBench implements Callable<Integer> {

    @Option(
            names = "--network",
            split = ",",
            description = "resnet50, mobilenetv2, bert, resnet18-small (default: ${DEFAULT-VALUE}).")
    List<String> networks = List.of("resnet18-small");

    @Option(names = "--threads", split = ",", description = "Thread counts, one child JVM each (default: 1,2).")
    int[] threads = {1, 2};

    @Option(
            names = "--trials",
            description = "Kiln tuning trials per network (0: build from the log if it exists, else untuned; default: "
                    + "${DEFAULT-VALUE}).")
    int trials = 0;

    @Option(
            names = "--log",
            description = "Kiln tuning log; '-<n>t' is added per thread count (default: ${DEFAULT-VALUE}).")
    Path log = Path.of("kiln-bench", "network", "tuning.jsonl");

    @Option(names = "--repeats", description = "Timed runs per implementation (default: ${DEFAULT-VALUE}).")
    int repeats = 50;

    @Option(names = "--warmup", description = "Untimed runs first (default: ${DEFAULT-VALUE}).")
    int warmup = 10;

    @Option(
            names = "--warmup-ms",
            description = "Then a warm-up by time, in ms; it stops earlier once the run times settle (default: "
                    + "${DEFAULT-VALUE}).")
    double warmupMs = 500;

    @Option(
            names = "--remeasure-top",
            description =
                    "After tuning, each task's fastest programs measured again before the best is chosen (0: none; "
                            + "default: ${DEFAULT-VALUE}).")
    int remeasureTop = MeasureOptions.defaults().remeasureTop();

    @Option(
            names = "--remeasure-rounds",
            description = "How many more measurements each of them gets (default: ${DEFAULT-VALUE}).")
    int remeasureRounds = MeasureOptions.defaults().remeasureRounds();

    @Mixin
    FlushCacheOption flushCache = new FlushCacheOption();

    @Option(
            names = "--shared-model",
            description = "All tasks' search policies share one cost model (default: one model per task).")
    boolean sharedModel;

    @Mixin
    TransferOption transfer = new TransferOption();

    @Mixin
    FmaOption fma = new FmaOption();

    @Option(
            names = "--unpacked",
            negatable = true,
            defaultValue = "true",
            fallbackValue = "true",
            description = "Also time the tuned programs on the weights' original layout (default: on).")
    boolean unpacked = true;

    @Option(
            names = "--min-seconds",
            description = "Timed runs go on until there are --repeats of them and this many seconds (default: "
                    + "${DEFAULT-VALUE}).")
    double minSeconds = 2;

    @Option(
            names = "--torch-formats",
            split = ",",
            description = "PyTorch memory formats to time: channels_last, nchw, or none (no PyTorch; default: "
                    + "channels_last).")
    List<String> torchFormats = List.of("channels_last");

    @Option(
            names = "--tolerance",
            description = "Output check against PyTorch as built, abs and rel (default: ${DEFAULT-VALUE}).")
    double tolerance = 2e-3;

    @Option(
            names = "--bf16",
            description = "Also run each network with its convs and dense layers in bfloat16 (ToBfloat16: bfloat16 "
                    + "weights and operands, float32 sums), tuned into its own log ('-bf16'), as 'kiln bf16'; and "
                    + "PyTorch's BN-folded model in bfloat16 (model.to(bfloat16)), as 'pytorch-bn-folded bf16'.")
    boolean bf16;

    @Mixin
    Bf16ActivationsOption bf16Activations = new Bf16ActivationsOption();

    @Option(
            names = "--bf16-tolerance",
            description = "The bfloat16 network's check against the float32 reference, relative and absolute "
                    + "(default: ${DEFAULT-VALUE}; bfloat16 keeps 8 significant bits).")
    double bf16Tolerance = 5e-2;

    @Option(names = "--seed", description = "Weights and input seed (default: ${DEFAULT-VALUE}).")
    long seed = 1;

    @Option(names = "--dir", description = "Where the TSV goes (default: ${DEFAULT-VALUE}).")
    Path dir = Path.of("kiln-bench", "network");

    @Option(
            names = "--openblas-coretype",
            description =
                    "OPENBLAS_CORETYPE for the children (default: the environment's, else SkylakeX on AVX-512 hosts).")
    String openblasCoreType;

    @Option(
            names = "--time-budget",
            description =
                    "Kiln tuning time limit per network and thread count, in seconds (0: none; the warm-up round of "
                            + "every task always completes; default: ${DEFAULT-VALUE}).")
    long timeBudget = 0;

    @Option(names = "--per-round", description = "Programs measured per task per round (default: ${DEFAULT-VALUE}).")
    int perRound = 64;

    @Option(
            names = "--strategy",
            split = ",",
            description = "Task scheduler strategies to tune with: gradient, round-robin (each its own log and latency "
                    + "curve; default: gradient).")
    List<String> strategies = List.of("gradient");

    @Option(
            names = "--pretrained",
            description =
                    "Start every task's cost model from this pretrained model: a file written by ./kiln pretrain, "
                            + "'bundled' (the one shipped with Kiln, the default) or 'none' (the learned model "
                            + "alone, starting random).")
    String pretrained;

    @Option(
            names = "--profile",
            negatable = true,
            defaultValue = "true",
            fallbackValue = "true",
            description =
                    "Print where Kiln's time goes: the slowest kernels and the time outside kernels (default: on).")
    boolean profile = true;

    @Option(
            names = "--target",
            description = "cpu (LLVM backend, PyTorch as the baseline) or jvm (the pure-JVM backend, no native code: "
                    + "the baseline is Kiln's untuned default lowering on the JVM backend; default: ${DEFAULT-VALUE}).")
    String targetName = "cpu";

    @Option(names = "--part", hidden = true, description = "Internal: what the child times: kiln or torch.")
    String part = "kiln";

    @Option(
            names = "--child-rows",
            hidden = true,
            description = "Internal: run one thread count in this JVM and write rows here.")
    Path childRows;

    public static void main(String[] args) {
        // later occurrences win, so `./kiln run` can put its defaults first and the user's options after
        System.exit(new CommandLine(new NetworkBench())
                .setOverwrittenOptionsAllowed(true)
                .execute(args));
    }

    @Override
    public Integer call() throws Exception {
        for (String n : networks) BenchNetworks.graphOf(n, seed); // fail early on a bad name
        strategies.forEach(NetworkBench::strategyOf);
        return childRows != null ? new NetworkChild(this).run() : parent();
    }

    // ---- the parent: one child JVM per thread count ---------------------------------------------

    private int parent() throws IOException, InterruptedException {
        Files.createDirectories(dir);
        List<String> rows = new ArrayList<>();
        String coreType = openblasCoreType != null ? openblasCoreType : System.getenv("OPENBLAS_CORETYPE");
        if (coreType == null && BenchHost.cpuHasAvx512()) coreType = "SkylakeX";
        boolean ok = true;
        for (int t : threads) {
            // Kiln first, in one JVM; then PyTorch, one JVM per network and memory format: a native crash (libtorch's
            // oneDNN 3.7 died with SIGFPE on ResNet-50's 1x1 convs before TorchNetwork sidestepped those shapes) loses
            // only that child's rows.
            List<List<String>> children = new ArrayList<>();
            children.add(List.of("kiln", String.join(",", networks), String.join(",", torchFormats)));
            if (jvm()) {
                System.out.println("--target jvm: no PyTorch (native); the baseline is Kiln's untuned default lowering"
                        + " on the JVM backend, timed in the same child");
            } else {
                for (String n : networks)
                    for (String f : torchFormats) if (!f.equals("none")) children.add(List.of("torch", n, f));
            }
            for (List<String> child : children) {
                String partName = child.get(0);
                String childNetworks = child.get(1);
                String childFormats = child.get(2);
                Path rowsFile = Files.createTempFile(dir, "rows-" + t + "t-", ".tsv");
                List<String> cmd = NetworkChildCommand.of(this, partName, childNetworks, childFormats, t, rowsFile);
                ProcessBuilder pb = new ProcessBuilder(cmd).inheritIO();
                Map<String, String> env = pb.environment();
                ChildJvm.threads(env, t, coreType);
                System.out.printf(
                        Locale.ROOT,
                        "== %s, %d thread(s): child JVM with OMP_NUM_THREADS=%d OPENBLAS_NUM_THREADS=%d "
                                + "OPENBLAS_CORETYPE=%s OMP_WAIT_POLICY=%s; load %s%n",
                        partName,
                        t,
                        t,
                        t,
                        coreType == null ? "(auto)" : coreType,
                        env.get("OMP_WAIT_POLICY"),
                        BenchHost.loadAverage());
                int rc = pb.start().waitFor();
                List<String> got = Files.readAllLines(rowsFile);
                rows.addAll(got);
                if (rc != 0) {
                    ok = false;
                    System.out.println(partName + " child for " + childNetworks + " (" + childFormats + "), " + t
                            + " thread(s), exited with " + rc);
                    for (String n : childNetworks.split(",")) {
                        boolean has = got.stream().anyMatch(r -> r.startsWith(n + "\t"));
                        if (!has || partName.equals("torch")) {
                            String impl = partName.equals("torch") ? "pytorch " + childFormats : "kiln";
                            rows.add(NetworkRows.crashed(n, t, impl, rc));
                        }
                    }
                }
                Files.deleteIfExists(rowsFile);
            }
        }
        NetworkRows.print(rows);
        System.out.println("written " + NetworkRows.write(dir, rows));
        if (trials > 0) NetworkCurves.write(dir, networks, threads, strategies, rows, seed);
        ok &= !NetworkRows.anyMismatch(rows);
        return ok ? 0 : 1;
    }

    /** Whether the run is on the pure-JVM backend ({@code --target jvm}); anything but cpu or jvm is an error. */
    boolean jvm() {
        return switch (targetName) {
            case "jvm" -> true;
            case "cpu" -> false;
            default -> throw new KilnException("--target must be cpu or jvm, got '" + targetName + "'");
        };
    }

    /** The task scheduler strategy named by --strategy. */
    static Strategy strategyOf(String s) {
        return switch (s.toLowerCase(Locale.ROOT).replace('_', '-')) {
            case "gradient" -> Strategy.GRADIENT;
            case "round-robin", "roundrobin" -> Strategy.ROUND_ROBIN;
            default -> throw new KilnException("--strategy: unknown strategy '" + s + "' (gradient, round-robin)");
        };
    }
}
