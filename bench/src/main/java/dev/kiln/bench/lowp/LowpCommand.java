package dev.kiln.bench.lowp;

import dev.kiln.autoschedule.sketch.MultiLevelTilingTensorize;
import dev.kiln.bench.network.FmaOption;
import dev.kiln.bench.plot.PeakProbe;
import dev.kiln.bench.suite.KernelTimer;
import dev.kiln.ir.KilnException;
import dev.kiln.runtime.Comparison;
import dev.kiln.runtime.NDArray;
import dev.kiln.schedule.AmxTensorIntrinsics;
import dev.kiln.schedule.TensorIntrinsics;
import dev.kiln.target.CpuTarget;
import dev.kiln.target.Target;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code kiln bench lowp}: bfloat16 and int8 GEMM and a ResNet conv layer tuned by Kiln (the
 * search tensorizes them onto AVX-512 VNNI / BF16 by itself), against oneDNN's bf16 and int8
 * primitives in the same run and against Kiln's own float32 result, with each instruction set's
 * peak measured by a JIT-compiled loop of the instruction. The conv is ResNet's 3x3, 64 -> 64
 * layer on 56x56 with its padding already applied to the input (1x58x58x64, no padding in the
 * op: {@code LowPrecision.conv2dPacked} has none), identical for both sides.
 */
@Command(
        name = "lowp",
        mixinStandardHelpOptions = true,
        description = {
            "bf16 and int8 GEMM and ResNet conv, tuned, against oneDNN and Kiln float32, with instruction peaks.",
            "Example: kiln bench lowp --trials 200 --threads 1,2 (rerun with --trials 0 to re-time the logs)"
        })
public final class LowpCommand implements Callable<Integer> {
    @Option(names = "--trials", description = "Tuning trials per workload (0: build from the log). Default 200.")
    int trials = 200;

    @Option(names = "--threads", split = ",", description = "Thread counts. Default 1,2.")
    List<Integer> threads = List.of(1, 2);

    @Option(names = "--gemm", split = ",", description = "GEMM M,N,K (N a multiple of 16, K of 4). Default 1024.")
    List<Long> gemm = List.of(1024L, 1024L, 1024L);

    @Option(
            names = "--conv",
            split = ",",
            description = "Conv H,W,C,K,R on the padded input (C a multiple of 4, K of 16). Default 58,58,64,64,3.")
    List<Long> conv = List.of(58L, 58L, 64L, 64L, 3L);

    @Option(
            names = "--dtypes",
            split = ",",
            description = "Data types to run, of f32, int8, bf16, f16 (f32 gives the vs_f32 column; f16 is the "
                    + "vfmadd231ph peak alone, no float16 workload rows yet). Default all four.")
    List<String> dtypes = List.of("f32", "int8", "bf16", "f16");

    @Option(names = "--workloads", split = ",", description = "Workloads to run, of gemm, conv. Default both.")
    List<String> workloads = List.of("gemm", "conv");

    @Option(names = "--out", description = "Directory for the TSV and tuning logs. Default kiln-bench/lowp.")
    Path out = Path.of("kiln-bench", "lowp");

    @Option(names = "--seed", description = "Search and input seed. Default 1.")
    long seed = 1;

    @Option(names = "--repeats", description = "Timed samples per kernel. Default 10.")
    int repeats = 10;

    @Option(names = "--warmup-seconds", description = "Untimed warm-up per kernel. Default 0.5.")
    double warmupSeconds = 0.5;

    @Option(names = "--sample-seconds", description = "Least length of one timed sample. Default 0.1.")
    double sampleSeconds = 0.1;

    @Option(names = "--peak-iterations", description = "Loop trips of the peak probe. Default 50000000.")
    long peakIterations = 50_000_000L;

    @Option(
            names = "--in-process",
            description = "Measure tuning trials in this JVM, one quick sample each (smoke runs; not for numbers).")
    boolean inProcess;

    @Option(
            names = "--amx",
            description = "Let the search tile the int8 and bf16 kernels for AMX (-Dkiln.search.amx=true) on a CPU "
                    + "that has it; elsewhere says so and tunes as without. Give it its own --out: a log tuned "
                    + "without it resumes as it was.")
    boolean amx;

    @Option(
            names = "--plain",
            description = "Write the int8 and bf16 GEMM as a plain DSL matmul on B [K, N] as given: the "
                    + "auto-scheduler packs B for the instructions itself (DotProductLayout), inside the program on "
                    + "every call. Without it Kiln reads B packed once in Java, as oneDNN's reorder is.")
    boolean plain;

    @Mixin
    FmaOption fma = new FmaOption();

    /** The rows of the last run (for tests). */
    List<LowpRow> rows = List.of();

    @Override
    public Integer call() throws Exception {
        if (!amx) return run();
        // the search reads the property when it builds its rules; restored so that nothing else in this JVM tiles for
        // AMX
        String before = System.getProperty(MultiLevelTilingTensorize.AMX_PROPERTY);
        System.setProperty(MultiLevelTilingTensorize.AMX_PROPERTY, "true");
        try {
            return run();
        } finally {
            if (before == null) System.clearProperty(MultiLevelTilingTensorize.AMX_PROPERTY);
            else System.setProperty(MultiLevelTilingTensorize.AMX_PROPERTY, before);
        }
    }

    private Integer run() throws Exception {
        checkChoices("--dtypes", dtypes, List.of("f32", "int8", "bf16", "f16"));
        checkChoices("--workloads", workloads, List.of("gemm", "conv"));
        KernelTimer timer = new KernelTimer(2, warmupSeconds, repeats, sampleSeconds);
        CpuTarget base = fma.apply(Target.cpu());
        System.out.println("kiln bench lowp on " + base + "; " + DnnlLowp.describe()
                + "; numbers from a busy machine mean nothing");
        if (amx) {
            String why = TensorIntrinsics.get(AmxTensorIntrinsics.AMX_BF16).unavailableReason(base);
            System.out.println(
                    why == null
                            ? "--amx: the search may tile the int8 and bf16 kernels for AMX"
                            : "--amx: " + why + "; the search keeps to the AVX-512 dot products");
        }
        List<LowpRow> all = new ArrayList<>();
        long[] g = gemm.stream().mapToLong(Long::longValue).toArray();
        long[] c = conv.stream().mapToLong(Long::longValue).toArray();
        try (DnnlLowp onednn = new DnnlLowp()) {
            for (int t : threads) {
                CpuTarget target = base.withCores(t);
                String threadNote = DnnlLowp.setThreads(t);
                Map<PeakProbe, Double> peaks = new EnumMap<>(PeakProbe.class);
                // the 512-bit probes: the f32 FMA256 probe is the roof of machines without AVX-512 (MachinePeaks)
                for (PeakProbe p : List.of(PeakProbe.VNNI, PeakProbe.BF16, PeakProbe.FP16, PeakProbe.FMA)) {
                    if (!dtypes.contains(dtypeOf(p))) continue;
                    PeakProbe.Peak pk = p.measure(target, t, peakIterations, 3);
                    peaks.put(p, pk.opsPerSecond());
                    all.add(
                            Double.isNaN(pk.opsPerSecond())
                                    ? LowpRow.skipped(
                                            "peak " + p.label, p.name().toLowerCase(Locale.ROOT), t, "probe", pk.note())
                                    : new LowpRow(
                                            "peak " + p.label,
                                            p.name().toLowerCase(Locale.ROOT),
                                            t,
                                            "probe",
                                            "ok",
                                            p.intrinsic + " x" + PeakProbe.CHAINS + " chains",
                                            Double.NaN,
                                            pk.opsPerSecond() / 1e9,
                                            1.0,
                                            Double.NaN,
                                            Double.NaN,
                                            "",
                                            String.format(Locale.ROOT, "%.1f G/s per core", pk.perCore() / 1e9)));
                }
                for (String kind : workloads) {
                    all.addAll(
                            workload(kind, kind.equals("gemm") ? g : c, target, t, peaks, onednn, timer, threadNote));
                }
            }
        }
        rows = List.copyOf(all);
        System.out.print(LowpRow.table(rows));
        Path tsv = out.resolve("lowp.tsv");
        LowpRow.writeTsv(tsv, rows);
        System.out.println("wrote " + tsv);
        return rows.stream().anyMatch(r -> r.status().startsWith("MISMATCH")) ? 1 : 0;
    }

    private List<LowpRow> workload(
            String kind,
            long[] p,
            CpuTarget target,
            int t,
            Map<PeakProbe, Double> peaks,
            DnnlLowp onednn,
            KernelTimer timer,
            String threadNote) {
        List<LowpRow> rows = new ArrayList<>();
        double kilnF32 = Double.NaN;
        for (String dtype : dtypes) {
            if (dtype.equals("f16")) continue; // its peak only: no float16 workload rows yet
            LowpCase lc = new LowpCase(kind, p, dtype, plain && kind.equals("gemm"));
            NDArray x = lc.input(seed), w = lc.weight(seed + 1);
            NDArray ref = lc.reference(x, w);
            double tol = dtype.equals("int8") ? 0 : 1e-3;
            PeakProbe probe = probeOf(dtype);
            double peak = peaks.get(probe);
            String why = dtype.equals("f32") ? null : unavailable(target, dtype);
            DnnlLowp.Result d = onednn.run(lc, x, w, timer);
            Comparison dc = d.output().compareTo(ref, tol, tol);
            LowpRow dRow = row(lc, t, "onednn", dc, d.timing(), d.impl(), peak, threadNote == null ? "" : threadNote);
            LowpRow kRow;
            if (why != null) {
                kRow = LowpRow.skipped(lc.workload(), dtype, t, "kiln", why);
            } else {
                Path log = out.resolve("logs").resolve(lc.id() + ".json");
                KilnLowp.Result k = new KilnLowp(target, log, trials, seed, timer, tol, inProcess).run(lc, x, w, ref);
                String kernel =
                        k.kernel() + (k.tensorized() ? ", tensorized (" + k.intrinsic() + ")" : ", not tensorized");
                kRow = row(lc, t, "kiln", k.check(), k.timing(), kernel, peak, k.notes());
                if (dtype.equals("f32")) kilnF32 = kRow.medianMs();
            }
            rows.add(kRow.ok() ? kRow.withRatios(dRow.medianMs(), kilnF32) : kRow);
            rows.add(dRow.withRatios(dRow.medianMs(), kilnF32));
        }
        return rows;
    }

    /** "skipped: no avx512_vnni" and the like, or null. */
    /** The peak probe of a data type's instruction. */
    static PeakProbe probeOf(String dtype) {
        return switch (dtype) {
            case "int8" -> PeakProbe.VNNI;
            case "bf16" -> PeakProbe.BF16;
            default -> PeakProbe.FMA;
        };
    }

    private static String dtypeOf(PeakProbe p) {
        return switch (p) {
            case VNNI -> "int8";
            case BF16 -> "bf16";
            case FP16 -> "f16";
            case FMA, FMA256 -> "f32";
        };
    }

    /** Throws naming {@code option} when {@code given} is empty or names something outside {@code known}. */
    static void checkChoices(String option, List<String> given, List<String> known) {
        if (given.isEmpty()) throw new KilnException(option + " names nothing; choose of " + known);
        for (String g : given) {
            if (!known.contains(g)) throw new KilnException(option + ": unknown '" + g + "'; choose of " + known);
        }
    }

    static String unavailable(CpuTarget target, String dtype) {
        String name = dtype.equals("int8") ? TensorIntrinsics.VNNI_U8S8 : TensorIntrinsics.BF16_DOT;
        String why = TensorIntrinsics.get(name).unavailableReason(target);
        if (why == null) return null;
        return "skipped: no " + (dtype.equals("int8") ? "avx512_vnni" : "avx512_bf16") + " (" + why + ")";
    }

    private static LowpRow row(
            LowpCase c,
            int t,
            String impl,
            Comparison check,
            KernelTimer.Timing tm,
            String kernel,
            double peak,
            String notes) {
        double rate = c.ops() / (tm.medianMs() / 1e3);
        String status = check.ok() ? "ok" : "MISMATCH";
        String chk = String.format(
                Locale.ROOT,
                "%s vs Java reference, max abs err %.3g",
                check.ok() ? "checked" : "FAILED",
                check.maxAbsError());
        if (!check.ok()) notes = (notes.isEmpty() ? "" : notes + "; ") + check.report();
        return new LowpRow(
                c.workload(),
                c.dtype(),
                t,
                impl,
                status,
                kernel,
                tm.medianMs(),
                rate / 1e9,
                rate / peak,
                Double.NaN,
                Double.NaN,
                chk,
                notes);
    }
}
