package dev.kiln.bench.suite;

import dev.kiln.bench.ChildJvm;
import dev.kiln.bench.network.BenchHost;
import dev.kiln.bench.network.FmaOption;
import dev.kiln.bench.network.NetworkLogs;
import dev.kiln.bench.suite.SuiteRow.Status;
import dev.kiln.ir.KilnException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
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
 * The Ansor paper's operator suite, Kiln against PyTorch, oneDNN and OpenBLAS:
 * {@code ./kiln suite [options]}. For each thread count, each implementation runs in its own child
 * JVM (Kiln; PyTorch; oneDNN; OpenBLAS) started with {@code OMP_NUM_THREADS} and
 * {@code OPENBLAS_NUM_THREADS} set to it, {@code OMP_WAIT_POLICY=PASSIVE} and
 * {@code OPENBLAS_CORETYPE} ({@code --openblas-coretype}, else the environment's), as
 * network-bench does: a native crash loses only that child's later rows, and libraries that read
 * their thread count once at start get the right one. Kiln tunes each workload with
 * {@code --trials} (counting what the log already holds; {@code --trials 0} builds the best logged
 * program without searching); every implementation's output is checked against the reference
 * ({@link SuiteReference}) with {@code --tolerance}. The table is printed and written as TSV under
 * {@code --dir}, with a PNG figure per thread count ({@link SuiteChart}); the command exits 1 on
 * a wrong result or a crashed child.
 */
@Command(
        name = "kiln suite",
        mixinStandardHelpOptions = true,
        sortOptions = false,
        description =
                "The Ansor operator suite: Kiln (tuned) against PyTorch, oneDNN and OpenBLAS, 1 and 2 threads, TSV "
                        + "and PNG.")
public final class OperatorSuite implements Callable<Integer> {

    @Option(
            names = "--ops",
            split = ",",
            description = "Operators to run (C1D, C2D, C3D, GMM, GRP, DIL, DEP, T2D, CAP, NRM, SFM, ConvLayer, TBS; "
                    + "default: all).")
    List<String> ops = List.of();

    @Option(
            names = "--workloads",
            description = "Workload list (default: the built-in copy of ../shared/workloads/ansor-ops.tsv).")
    Path workloads;

    @Option(
            names = "--batch",
            description =
                    "Batch, replacing the first parameter of each workload (SFM has none; default: ${DEFAULT-VALUE}).")
    long batch = 1;

    @Option(
            names = "--trials",
            description = "Kiln's trial budget per workload, counting the log's (0: build from the log, no search; "
                    + "default: ${DEFAULT-VALUE}).")
    int trials = 200;

    @Option(names = "--per-round", description = "Programs measured per tuning round (default: ${DEFAULT-VALUE}).")
    int perRound = 64;

    @Option(
            names = "--threads",
            split = ",",
            description = "Thread counts, a child JVM per implementation each (default: 1,2).")
    int[] threads = {1, 2};

    @Option(
            names = "--impls",
            split = ",",
            description = "Implementations: kiln, pytorch, onednn, openblas (default: all).")
    List<String> impls = List.of("kiln", "pytorch", "onednn", "openblas");

    @Option(
            names = "--log",
            description = "Kiln's tuning log; '-<n>t' is added per thread count (default: ${DEFAULT-VALUE}).")
    Path log = Path.of("kiln-bench", "suite", "tuning.jsonl");

    @Option(
            names = "--dir",
            description = "Where the TSV, the PNGs and the reference outputs go (default: ${DEFAULT-VALUE}).")
    Path dir = Path.of("kiln-bench", "suite");

    @Option(names = "--repeats", description = "Timed samples per implementation (default: ${DEFAULT-VALUE}).")
    int repeats = 30;

    @Option(names = "--warmup", description = "Untimed calls first, at least (default: ${DEFAULT-VALUE}).")
    int warmup = 10;

    @Option(names = "--warmup-seconds", description = "Untimed seconds first, at least (default: ${DEFAULT-VALUE}).")
    double warmupSeconds = 0.5;

    @Option(
            names = "--sample-ms",
            description =
                    "Each timed sample lasts at least this long, as back-to-back calls (default: ${DEFAULT-VALUE}).")
    double sampleMs = 20;

    @Option(
            names = "--tolerance",
            description = "Output check against the reference, absolute and relative (default: ${DEFAULT-VALUE}).")
    double tolerance = 2e-3;

    @Option(
            names = "--check-flops",
            description = "While tuning, check programs against the interpreter only up to this many FLOPs (default: "
                    + "${DEFAULT-VALUE}).")
    double checkFlops = 2e8;

    @Option(names = "--seed", description = "Input and search seed (default: ${DEFAULT-VALUE}).")
    long seed = 1;

    @Mixin
    FmaOption fmaOption = new FmaOption();

    @Option(
            names = "--layout-free",
            negatable = true,
            defaultValue = "true",
            fallbackValue = "true",
            description = "Tune and time Kiln's convs with their weight layout-free, as oneDNN (format_tag::any) "
                    + "reorders its weights once outside the timing: programs are measured and built with the weight "
                    + "packed in the order of their tiles, once, outside the timing (logged under their own key, "
                    + "'layout_free=[1]'). --no-layout-free reads the weight as given, the behaviour (and log keys) "
                    + "before 2026-12-02 (default: on).")
    boolean layoutFree = true;

    @Option(
            names = "--passes",
            description = "Timing passes: after the first (which tunes), each implementation's child runs again "
                    + "this many times less one, in turn with the others, Kiln's built from the log without search; "
                    + "each row keeps its fastest pass (by median) and notes every pass's median. A kernel whose "
                    + "data spills the last-level cache (shared with the rest of the host) times 1.5x apart from one "
                    + "process to the next; alternating passes give every implementation the same chances "
                    + "(default: ${DEFAULT-VALUE}).")
    int passes = 1;

    @Option(
            names = "--openblas-coretype",
            description = "OPENBLAS_CORETYPE for the children only (default: the environment's).")
    String openblasCoreType;

    @Option(names = "--part", hidden = true, description = "Internal: the implementation a child runs.")
    String part;

    @Option(
            names = "--child-rows",
            hidden = true,
            description = "Internal: run one part and thread count here, rows to this file.")
    Path childRows;

    public static void main(String[] args) {
        System.exit(new CommandLine(new OperatorSuite())
                .setOverwrittenOptionsAllowed(true)
                .setExecutionExceptionHandler((e, cl, parsed) -> { // bad input: its message, not a stack trace
                    if (!(e instanceof KilnException)) throw e;
                    cl.getErr().println("kiln suite: " + e.getMessage());
                    return 2;
                })
                .execute(args));
    }

    @Override
    public Integer call() throws Exception {
        List<SuiteWorkload> selected = SuiteWorkloads.select(
                workloads == null ? SuiteWorkloads.builtIn() : SuiteWorkloads.read(workloads), ops, batch);
        for (String i : impls) {
            if (!List.of("kiln", "pytorch", "onednn", "openblas").contains(i)) {
                throw new KilnException(
                        "--impls: unknown implementation '" + i + "' (kiln, pytorch, onednn, openblas)");
            }
        }
        if (trials < 0) throw new KilnException("--trials must be 0 or more, got " + trials);
        if (passes < 1) throw new KilnException("--passes must be at least 1, got " + passes);
        for (int t : threads) if (t < 1) throw new KilnException("--threads: each must be at least 1, got " + t);
        KernelTimer timer = new KernelTimer(warmup, warmupSeconds, repeats, sampleMs / 1e3);
        if (childRows != null) {
            int t = threads[0];
            KilnPart kiln = new KilnPart(
                    SuiteChild.target(t, fmaOption.enabled()),
                    NetworkLogs.logFor(log, t),
                    trials,
                    perRound,
                    seed,
                    checkFlops,
                    timer,
                    tolerance,
                    layoutFree);
            new SuiteChild(part, t, selected, seed, dir.resolve("reference"), timer, tolerance, kiln, childRows).run();
            return 0;
        }
        return parent(selected);
    }

    private int parent(List<SuiteWorkload> selected) throws IOException, InterruptedException {
        Files.createDirectories(dir);
        String coreType = openblasCoreType != null ? openblasCoreType : System.getenv("OPENBLAS_CORETYPE");
        System.out.printf(
                Locale.ROOT,
                "suite: %d workload(s) (%s), batch %d, %d trial(s) each, threads %s, implementations %s, Kiln's conv "
                        + "weights %s%n",
                selected.size(),
                String.join(
                        ",", selected.stream().map(SuiteWorkload::op).distinct().toList()),
                batch,
                trials,
                java.util.Arrays.toString(threads),
                impls,
                layoutFree ? "layout-free (packed once, outside the timing)" : "read as given (--no-layout-free)");
        List<List<SuiteRow>> byPass = new ArrayList<>();
        boolean crashed = false;
        for (int pass = 0; pass < passes; pass++) {
            List<SuiteRow> rows = new ArrayList<>();
            crashed |= runPass(selected, coreType, pass, rows);
            byPass.add(rows);
        }
        List<SuiteRow> rows = SuitePasses.fastest(byPass);
        List<String> order = selected.stream().map(SuiteWorkload::label).toList();
        rows = SuiteReport.withRatios(rows).stream()
                .sorted(java.util.Comparator.comparingInt(SuiteRow::threads)
                        .thenComparingInt(r -> order.indexOf(r.workload()))
                        .thenComparingInt(r -> impls.indexOf(r.impl())))
                .toList();
        System.out.println();
        System.out.print(SuiteReport.table(rows));
        String stamp = LocalDateTime.now().format(DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss"));
        Path tsv = dir.resolve("suite-" + stamp + ".tsv");
        List<String> lines = new ArrayList<>();
        lines.add(SuiteRow.HEADER);
        rows.forEach(r -> lines.add(r.toTsv()));
        Files.write(tsv, lines);
        System.out.println("written " + tsv);
        for (int t : threads) {
            Path png = dir.resolve("suite-" + stamp + "-" + t + "t.png");
            SuiteChart.write(
                    png,
                    rows,
                    t,
                    impls,
                    String.format(
                            Locale.ROOT,
                            "batch %d, Kiln %d trials per workload, %s; load %s",
                            batch,
                            trials,
                            stamp,
                            BenchHost.loadAverage()));
            System.out.println("written " + png);
        }
        if (impls.contains("kiln") && trials > 0)
            SuiteCurves.write(dir, log, selected, threads, fmaOption.enabled(), rows);
        boolean wrong = rows.stream().anyMatch(r -> r.status() == Status.MISMATCH);
        return wrong || crashed ? 1 : 0;
    }

    /**
     * One pass: a child JVM per thread count and implementation, in turn; its rows go to {@code rows}. Passes after
     * the first build Kiln's kernels from the log (no search). Returns whether a child crashed.
     */
    private boolean runPass(List<SuiteWorkload> selected, String coreType, int pass, List<SuiteRow> rows)
            throws IOException, InterruptedException {
        boolean crashed = false;
        if (passes > 1) System.out.printf(Locale.ROOT, "== pass %d of %d%n", pass + 1, passes);
        for (int t : threads) {
            for (String impl : impls) {
                Path rowsFile = Files.createTempFile(dir, "rows-" + impl + "-" + t + "t-", ".tsv");
                ProcessBuilder pb =
                        new ProcessBuilder(childCommand(impl, t, rowsFile, pass == 0 ? trials : 0)).inheritIO();
                Map<String, String> env = pb.environment();
                ChildJvm.threads(env, t, coreType);
                System.out.printf(
                        Locale.ROOT,
                        "== %s, %d thread(s): child JVM, OMP_NUM_THREADS=%d OPENBLAS_CORETYPE=%s OMP_WAIT_POLICY=%s; "
                                + "load %s%n",
                        impl,
                        t,
                        t,
                        coreType == null ? "(auto)" : coreType,
                        env.get("OMP_WAIT_POLICY"),
                        BenchHost.loadAverage());
                int rc = pb.start().waitFor();
                List<SuiteRow> got = SuiteRow.parseAll(Files.readAllLines(rowsFile), rowsFile.toString());
                rows.addAll(got);
                if (rc != 0) {
                    crashed = true;
                    for (SuiteWorkload w : selected) {
                        if (got.stream().noneMatch(r -> r.workload().equals(w.label()))) {
                            rows.add(SuiteRow.notRun(
                                    w,
                                    t,
                                    impl,
                                    Status.CRASHED,
                                    "the child JVM exited with " + rc
                                            + " before this workload (see its output and any hs_err_pid*.log)"));
                        }
                    }
                }
                Files.deleteIfExists(rowsFile);
            }
        }
        return crashed;
    }

    private List<String> childCommand(String impl, int t, Path rowsFile, int childTrials) {
        List<String> cmd = ChildJvm.command(OperatorSuite.class);
        cmd.addAll(List.of(
                "--part",
                impl,
                "--threads",
                String.valueOf(t),
                "--child-rows",
                rowsFile.toString(),
                "--batch",
                String.valueOf(batch),
                "--trials",
                String.valueOf(childTrials),
                "--per-round",
                String.valueOf(perRound),
                "--log",
                log.toString(),
                "--dir",
                dir.toString(),
                "--repeats",
                String.valueOf(repeats),
                "--warmup",
                String.valueOf(warmup),
                "--warmup-seconds",
                String.valueOf(warmupSeconds),
                "--sample-ms",
                String.valueOf(sampleMs),
                "--tolerance",
                String.valueOf(tolerance),
                "--check-flops",
                String.valueOf(checkFlops),
                "--seed",
                String.valueOf(seed),
                fmaOption.arg(),
                layoutFree ? "--layout-free" : "--no-layout-free"));
        if (!ops.isEmpty()) cmd.addAll(List.of("--ops", String.join(",", ops)));
        if (workloads != null) cmd.addAll(List.of("--workloads", workloads.toString()));
        return cmd;
    }
}
