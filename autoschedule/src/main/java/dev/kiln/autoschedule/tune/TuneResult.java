package dev.kiln.autoschedule.tune;

import dev.kiln.autoschedule.SearchTask;
import dev.kiln.autoschedule.search.SearchOutcome;
import dev.kiln.autoschedule.search.StopReason;
import dev.kiln.ir.KilnException;
import dev.kiln.runtime.NDArray;
import dev.kiln.schedule.Schedule;
import dev.kiln.target.CompiledKernel;
import dev.kiln.target.Target;
import dev.kiln.tir.PrimFunc;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * What {@link AutoSchedule#tune} found: the best program, how fast it ran, what the search did
 * (trials, errors, why it stopped), anything the user should know (records of other targets that
 * were not applied, damaged log lines, schedules that no longer replay), and the kernel compiled
 * from the best program. Closing the result closes the kernel.
 *
 * <p>The result is itself a {@link CompiledKernel}: {@code AutoSchedule.tune(C, Target.CPU).call(a, b, c)}
 * runs the best program ({@link #call}, {@link #source}, {@link #func} and {@link #target} are the
 * kernel's).
 *
 * @param task      the task that was tuned
 * @param schedule  the fastest program measured
 * @param seconds   its measured time (the median of its repeats)
 * @param outcome   what the search loop did
 * @param logFile   the tuning log, if the run kept one
 * @param notes     things the user should know, each one sentence
 * @param kernel    the best program, compiled for the target
 */
public record TuneResult(
        SearchTask task,
        Schedule schedule,
        double seconds,
        SearchOutcome outcome,
        Optional<Path> logFile,
        List<String> notes,
        CompiledKernel kernel)
        implements CompiledKernel {
    public TuneResult {
        Objects.requireNonNull(task, "task");
        Objects.requireNonNull(schedule, "schedule");
        Objects.requireNonNull(outcome, "outcome");
        Objects.requireNonNull(logFile, "logFile");
        Objects.requireNonNull(kernel, "kernel");
        notes = List.copyOf(notes);
    }

    /**
     * The best program's speed in GFLOP/s, or GOP/s for an integer computation (the unit is
     * {@link #rateUnit()}).
     */
    public double gflops() {
        return task.dag().flopCount() / seconds / 1e9;
    }

    /** {@code "GFLOP/s"}, or {@code "GOP/s"} when the computation is integer arithmetic. */
    public String rateUnit() {
        return task.dag().rateUnit();
    }

    /** Trials of the task, those restored from the log included. */
    public int trials() {
        return outcome.trials();
    }

    /** Trials this run measured. */
    public int newTrials() {
        return outcome.newTrials();
    }

    /** Failed measurements among all trials. */
    public int errors() {
        return outcome.errors();
    }

    /** Failed measurements by error kind. */
    public Map<String, Integer> errorsByKind() {
        return outcome.errorsByKind();
    }

    public StopReason stopReason() {
        return outcome.stopReason();
    }

    /** Which trial found the best program (counting from 1 over the log). */
    public int bestTrial() {
        return outcome.best().orElseThrow().trial();
    }

    /** A few lines for people: the best time and speed, the trials, the errors, why it stopped, the notes. */
    public String summary() {
        StringBuilder sb = new StringBuilder(String.format(
                Locale.ROOT,
                "best %.4g ms (%.2f %s), found at trial %d of %d (%d measured now, %d errors%s); stopped: %s",
                seconds * 1e3,
                gflops(),
                rateUnit(),
                bestTrial(),
                trials(),
                newTrials(),
                errors(),
                errorsByKind().isEmpty() ? "" : " " + errorsByKind(),
                stopReason()));
        for (String n : notes) sb.append('\n').append("note: ").append(n);
        return sb.toString();
    }

    /**
     * The array to pass for layout-free argument {@code name} ({@link TuneOptions.Builder#layoutFree}), packed once
     * from its original value: {@link LayoutFreeKernel#pack}. Throws {@link KilnException} when the run had no
     * layout-free argument of that name.
     */
    public NDArray pack(String name, NDArray original) {
        if (kernel instanceof LayoutFreeKernel k) return k.pack(name, original);
        throw new KilnException("'" + name + "' is not a layout-free argument of this tuning run (none was declared: "
                + "TuneOptions.Builder.layoutFree)");
    }

    /** Runs the best program on {@code args} (the computation's inputs, then its outputs): {@link #kernel}'s call. */
    @Override
    public void call(NDArray... args) {
        kernel.call(args);
    }

    /** The best program's generated code (LLVM IR and assembly, CUDA C, ...). */
    @Override
    public String source() {
        return kernel.source();
    }

    /** The loop program the kernel was compiled from. */
    @Override
    public PrimFunc func() {
        return kernel.func();
    }

    /** The target the kernel was compiled for. */
    @Override
    public Target target() {
        return kernel.target();
    }

    @Override
    public void close() {
        kernel.close();
    }
}
