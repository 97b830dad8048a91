package dev.kiln.bench.lowp;

import dev.kiln.autoschedule.measure.LocalMeasurer;
import dev.kiln.autoschedule.measure.MeasureOptions;
import dev.kiln.autoschedule.measure.Measurer;
import dev.kiln.autoschedule.measure.MeasurerProviders;
import dev.kiln.autoschedule.tune.AutoSchedule;
import dev.kiln.autoschedule.tune.TuneOptions;
import dev.kiln.autoschedule.tune.TuneResult;
import dev.kiln.bench.suite.KernelTimer;
import dev.kiln.ir.KilnException;
import dev.kiln.lower.LowerDefault;
import dev.kiln.runtime.Comparison;
import dev.kiln.runtime.NDArray;
import dev.kiln.schedule.Schedule;
import dev.kiln.schedule.TensorizeStep;
import dev.kiln.target.Backend;
import dev.kiln.target.CompiledKernel;
import dev.kiln.target.CpuTarget;
import dev.kiln.te.ComputeDAG;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;

/**
 * Kiln's side of one case: {@code AutoSchedule.tune} with a trial budget and a log (a budget the
 * log already meets measures nothing new), or with {@code trials == 0} the best logged program
 * built without search (the default lowering, marked UNTUNED, when the log has no record); then
 * timed with the same {@link KernelTimer} as oneDNN and checked against the plain-Java reference
 * (int8 exactly, bf16/f32 within {@code tolerance}). {@code inProcess} measures trials in this JVM
 * with one quick sample each (for smoke runs), rather than in the target's default child-process
 * measurer.
 */
record KilnLowp(
        CpuTarget target, Path log, int trials, long seed, KernelTimer timer, double tolerance, boolean inProcess) {

    /** What Kiln gave: the timing, the kernel, the tensor intrinsic it uses (null: none), the check. */
    record Result(KernelTimer.Timing timing, String kernel, String intrinsic, Comparison check, String notes) {
        boolean tensorized() {
            return intrinsic != null;
        }
    }

    Result run(LowpCase c, NDArray x, NDArray w, NDArray reference) {
        ComputeDAG dag = c.dag();
        String name;
        String notes = "";
        CompiledKernel kernel;
        Schedule schedule = null;
        if (trials > 0) {
            boolean check = c.ops() <= 1e8;
            MeasureOptions mo = MeasureOptions.defaults().withCheckCorrectness(check);
            if (inProcess)
                mo = mo.withRepeats(1).withMinRepeatMs(0).withWarmup(0).withWarmupMs(0);
            try (Measurer m = inProcess ? LocalMeasurer.of(target, mo) : MeasurerProviders.start(target, mo)) {
                TuneOptions opts = TuneOptions.builder()
                        .trials(trials)
                        .measuresPerRound(Math.min(64, trials))
                        .seed(seed)
                        .logFile(log)
                        .measureOptions(mo)
                        .measurer(m)
                        .progressBar(false)
                        .build();
                TuneResult r = AutoSchedule.tune(dag, target, opts);
                kernel = r.kernel();
                schedule = r.schedule();
                name = String.format(Locale.ROOT, "tuned, best of %d trials", r.trials());
                notes = String.format(Locale.ROOT, "%d new trials, %d errors", r.newTrials(), r.errors());
            }
        } else if (Files.exists(log) && (schedule = bestOrNull(dag)) != null) {
            kernel = AutoSchedule.build(dag, target, log);
            name = "built from the log";
        } else {
            kernel = Backend.forTarget(target).compile(LowerDefault.lower("untuned_" + c.id(), dag), target);
            name = "UNTUNED default lowering";
            notes = "no record in " + log + "; run with --trials N";
        }
        String intrinsic = schedule == null
                ? null
                : schedule.steps().stream()
                        .filter(s -> s instanceof TensorizeStep)
                        .map(s -> ((TensorizeStep) s).intrinsic())
                        .findFirst()
                        .orElse(null);
        NDArray packed = c.packed(w);
        NDArray out = NDArray.allocate(c.outType(), c.outShape());
        try (CompiledKernel k = kernel) {
            k.call(x, packed, out);
            Comparison cmp = out.compareTo(
                    reference,
                    c.dtype().equals("int8") ? 0 : tolerance,
                    c.dtype().equals("int8") ? 0 : tolerance);
            KernelTimer.Timing t = timer.time(() -> k.call(x, packed, out));
            return new Result(t, name, intrinsic, cmp, notes);
        }
    }

    private Schedule bestOrNull(ComputeDAG dag) {
        try {
            return AutoSchedule.bestSchedule(dag, target, log);
        } catch (KilnException e) {
            return null;
        }
    }
}
