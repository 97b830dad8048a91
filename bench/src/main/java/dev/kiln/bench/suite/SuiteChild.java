package dev.kiln.bench.suite;

import dev.kiln.bench.network.TorchRuntime;
import dev.kiln.bench.suite.SuiteRow.Status;
import dev.kiln.runtime.Comparison;
import dev.kiln.runtime.NDArray;
import dev.kiln.samples.OpenBlas;
import dev.kiln.target.CpuTarget;
import dev.kiln.target.Target;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.function.Supplier;

/**
 * One child process of the suite: one implementation ("kiln", "pytorch", "onednn", "openblas") on
 * one thread count, over every selected workload. Each row is appended to {@code rowsFile} as soon
 * as it is measured, so a native crash later loses nothing already measured.
 */
record SuiteChild(
        String part,
        int threads,
        List<SuiteWorkload> workloads,
        long seed,
        Path refDir,
        KernelTimer timer,
        double tolerance,
        KilnPart kiln,
        Path rowsFile) {

    void run() throws IOException {
        Files.write(rowsFile, List.of());
        Baseline baseline = null;
        String loadError = null;
        if (part.equals("kiln")) {
            System.out.println("   Kiln on " + kiln.target() + ", log " + kiln.log() + ", " + kiln.trials()
                    + " trial(s) per workload");
        } else {
            try {
                baseline = baselineOf(part, threads);
                System.out.println("   " + baseline.describe());
            } catch (Throwable e) {
                loadError = part + " cannot be loaded: " + e.getMessage();
                System.out.println("   " + loadError);
            }
        }
        for (SuiteWorkload w : workloads) {
            System.out.printf("   %s %dt %s%n", part, threads, w.label());
            SuiteRow row;
            try (SuiteReference ref = SuiteReference.of(w, seed, refDir)) {
                if (part.equals("kiln")) {
                    row = kiln.run(w, ref.dag(), ref.args(), ref.reference());
                } else if (loadError != null) {
                    row = SuiteRow.notRun(w, threads, part, Status.ERROR, loadError);
                } else {
                    row = timeBaseline(baseline, w, ref);
                }
            } catch (RuntimeException | OutOfMemoryError e) {
                row = SuiteRow.notRun(w, threads, part, Status.ERROR, e.toString());
            }
            System.out.printf(
                    "     %s %s median %.4f ms %s%n", row.status(), row.kernel(), row.medianMs(), row.notes());
            Files.write(rowsFile, List.of(row.toTsv()), StandardOpenOption.APPEND);
        }
        if (baseline != null) baseline.close();
    }

    private SuiteRow timeBaseline(Baseline b, SuiteWorkload w, SuiteReference ref) {
        Baseline.Prepared p;
        try {
            p = b.prepare(w, ref.inputs(), ref.outDims());
        } catch (Baseline.Unsupported u) {
            return SuiteRow.notRun(w, threads, b.name(), Status.UNSUPPORTED, u.getMessage());
        }
        try (p) {
            KernelTimer.Timing t = timer.time(p::run);
            try (NDArray out = p.output()) {
                Comparison c = out.compareTo(ref.reference(), tolerance, tolerance);
                double flops = ref.dag().flopCount();
                return new SuiteRow(
                        w.op(),
                        w.config(),
                        threads,
                        b.name(),
                        c.ok() ? Status.OK : Status.MISMATCH,
                        p.kernel(),
                        t.minMs(),
                        t.medianMs(),
                        t.p90Ms(),
                        t.calls(),
                        flops / (t.medianMs() / 1e3) / 1e9,
                        c.maxAbsError(),
                        Double.NaN,
                        Double.NaN,
                        0,
                        Double.NaN,
                        Double.NaN,
                        t.loadBefore(),
                        t.loadAfter(),
                        c.ok() ? "" : c.report());
            }
        }
    }

    /** The baseline of a part, with its threads set in this process too. */
    static Baseline baselineOf(String part, int threads) {
        Supplier<Baseline> make =
                switch (part) {
                    case "pytorch" ->
                        () -> {
                            TorchRuntime.setThreads(threads);
                            return new TorchOps();
                        };
                    case "onednn" -> DnnlOps::new;
                    case "openblas" ->
                        () -> {
                            OpenBlas.setThreads(threads);
                            return new BlasOps();
                        };
                    default ->
                        throw new dev.kiln.ir.KilnException(
                                "--impls: unknown implementation '" + part + "' (kiln, pytorch, onednn, openblas)");
                };
        return make.get();
    }

    /**
     * Kiln's target for {@code threads} cores; with {@code fma} float multiply-adds are contracted
     * into FMAs ({@link CpuTarget#withFastMath}), as the libraries it is timed against compute them.
     */
    static CpuTarget target(int threads, boolean fma) {
        return Target.cpu().withCores(threads).withFastMath(fma);
    }
}
