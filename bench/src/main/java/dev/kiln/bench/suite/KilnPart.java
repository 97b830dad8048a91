package dev.kiln.bench.suite;

import dev.kiln.autoschedule.measure.MeasureOptions;
import dev.kiln.autoschedule.measure.MeasurerProviders;
import dev.kiln.autoschedule.tune.AutoSchedule;
import dev.kiln.autoschedule.tune.LayoutFreeKernel;
import dev.kiln.autoschedule.tune.TuneOptions;
import dev.kiln.autoschedule.tune.TuneResult;
import dev.kiln.bench.suite.SuiteRow.Status;
import dev.kiln.ir.KilnException;
import dev.kiln.lower.LowerDefault;
import dev.kiln.runtime.Comparison;
import dev.kiln.runtime.NDArray;
import dev.kiln.target.Backend;
import dev.kiln.target.CompiledKernel;
import dev.kiln.target.CpuTarget;
import dev.kiln.te.ComputeDAG;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Kiln's side of one workload: tune it (the log keeps every measurement, and a budget already
 * met by the log's trials measures nothing new), or with {@code trials == 0} build the best
 * logged program without searching (the default lowering, marked UNTUNED, when the log has none);
 * then time the kernel with the suite's {@link KernelTimer} and check its output.
 *
 * <p>Tuning time is split with a {@link TimedMeasurer}: wall time per new trial, and the share of
 * it spent outside measurement (sketch sampling, evolution, the cost model). Programs are checked
 * against the interpreter while tuning only when the workload has at most {@code checkFlops}
 * FLOPs (the interpreter would take minutes on the big convs); every tuned kernel is checked
 * afterwards against the reference anyway.
 *
 * <p>With {@code layoutFree} the workload's constant weights ({@link SuiteDags#layoutFree}) are layout-free: the task
 * is tuned (and looked up in the log) with them packed in the order of each program's tiles, and the kernel is timed
 * on the weights packed once, before the timing ({@link LayoutFreeKernel#pack}), as oneDNN's are reordered.
 */
record KilnPart(
        CpuTarget target,
        Path log,
        int trials,
        int perRound,
        long seed,
        double checkFlops,
        KernelTimer timer,
        double tolerance,
        boolean layoutFree) {

    SuiteRow run(SuiteWorkload w, ComputeDAG dag, NDArray[] args, NDArray reference) {
        double tuneSeconds = Double.NaN, perTrial = Double.NaN, outside = Double.NaN;
        int trialCount = 0;
        String kernelName;
        String notes = "";
        CompiledKernel kernel;
        List<String> constants = layoutFree ? SuiteDags.layoutFree(w) : List.of();
        if (trials > 0) {
            boolean check = dag.flopCount() <= checkFlops;
            MeasureOptions mo = MeasureOptions.defaults().withCheckCorrectness(check);
            long t0 = System.nanoTime();
            try (TimedMeasurer m = new TimedMeasurer(MeasurerProviders.start(target, mo))) {
                TuneOptions opts = TuneOptions.builder()
                        .trials(trials)
                        .measuresPerRound(Math.min(perRound, trials))
                        .seed(seed)
                        .logFile(log)
                        .measureOptions(mo)
                        .measurer(m)
                        .progressBar(false)
                        .layoutFree(constants.toArray(String[]::new))
                        .build();
                TuneResult r = AutoSchedule.tune(dag, target, opts);
                double wall = (System.nanoTime() - t0) / 1e9;
                tuneSeconds = wall;
                trialCount = r.trials();
                if (r.newTrials() > 0) {
                    perTrial = wall / r.newTrials();
                    outside = Math.max(0, wall - m.seconds()) / wall;
                }
                kernel = r.kernel();
                kernelName =
                        String.format(Locale.ROOT, "tuned, best of %d trials (trial %d)", r.trials(), r.bestTrial());
                notes = String.format(
                        Locale.ROOT,
                        "%d new trials, %d errors%s, stop %s; programs %schecked against the interpreter while tuning",
                        r.newTrials(),
                        r.errors(),
                        r.errorsByKind().isEmpty() ? "" : " " + r.errorsByKind(),
                        r.stopReason(),
                        check ? "" : "not ");
                for (String n : r.notes()) notes += "; " + n;
            }
        } else if (Files.exists(log) && hasRecord(dag, constants)) {
            kernel = constants.isEmpty()
                    ? AutoSchedule.build(dag, target, log)
                    : AutoSchedule.buildLayoutFree(dag, target, log, constants.toArray(String[]::new));
            kernelName = "built from the log (no search)";
        } else {
            kernel = Backend.forTarget(target).compile(LowerDefault.lower("untuned_" + w.op(), dag), target);
            kernelName = "UNTUNED default lowering";
            notes = "no record of this workload for target '" + target + "' in " + log
                    + "; run with --trials N to tune it (a log of a run with"
                    + (target.fastMath() ? "out FMA contraction needs --no-fma)" : " FMA contraction needs --fma)");
        }
        kernelName += ", LLVM -mcpu=" + target.cpu();
        NDArray[] callArgs = args.clone();
        List<NDArray> packed = new ArrayList<>();
        if (kernel instanceof LayoutFreeKernel lf) {
            for (String name : lf.layoutFree()) {
                int a = argumentIndex(dag, name);
                callArgs[a] = lf.pack(name, args[a]);
                if (callArgs[a] != args[a]) packed.add(callArgs[a]);
            }
            kernelName +=
                    ", weights layout-free (packed once, untimed" + (lf.note().isEmpty() ? "" : ": " + lf.note()) + ")";
        }
        try (CompiledKernel k = kernel) {
            KernelTimer.Timing t = timer.time(() -> k.call(callArgs));
            NDArray out = args[args.length - 1];
            Comparison c = out.compareTo(reference, tolerance, tolerance);
            if (!c.ok()) notes = (notes.isEmpty() ? "" : notes + "; ") + c.report();
            return new SuiteRow(
                    w.op(),
                    w.config(),
                    target.cores(),
                    "kiln",
                    c.ok() ? Status.OK : Status.MISMATCH,
                    kernelName,
                    t.minMs(),
                    t.medianMs(),
                    t.p90Ms(),
                    t.calls(),
                    dag.flopCount() / (t.medianMs() / 1e3) / 1e9,
                    c.maxAbsError(),
                    Double.NaN,
                    tuneSeconds,
                    trialCount,
                    perTrial,
                    outside,
                    t.loadBefore(),
                    t.loadAfter(),
                    notes);
        } finally {
            packed.forEach(NDArray::close);
        }
    }

    private static int argumentIndex(ComputeDAG dag, String name) {
        for (int a = 0; a < dag.arguments().size(); a++)
            if (dag.arguments().get(a).name().equals(name)) return a;
        throw new KilnException("no argument '" + name + "' in the workload's computation");
    }

    private boolean hasRecord(ComputeDAG dag, List<String> constants) {
        try {
            AutoSchedule.bestSchedule(AutoSchedule.task(dag, target, constants), log);
            return true;
        } catch (KilnException e) {
            return false;
        }
    }
}
