package dev.kiln.autoschedule.tune;

import dev.kiln.autoschedule.HardwareParams;
import dev.kiln.autoschedule.SearchTask;
import dev.kiln.autoschedule.log.LogLookup;
import dev.kiln.autoschedule.log.LogRecord;
import dev.kiln.autoschedule.log.TuningLog;
import dev.kiln.autoschedule.measure.Measurer;
import dev.kiln.autoschedule.measure.ScheduleLowerer;
import dev.kiln.autoschedule.progress.TuneProgress;
import dev.kiln.autoschedule.search.BestProgram;
import dev.kiln.autoschedule.search.SearchLoop;
import dev.kiln.autoschedule.search.SearchOutcome;
import dev.kiln.autoschedule.search.SearchPolicy;
import dev.kiln.ir.KilnException;
import dev.kiln.schedule.Schedule;
import dev.kiln.target.Backend;
import dev.kiln.target.CompiledKernel;
import dev.kiln.target.Target;
import dev.kiln.te.ComputeDAG;
import dev.kiln.te.Tensor;
import dev.kiln.tir.PrimFunc;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The front door of the auto-scheduler. {@link #tune} searches for a fast program for a
 * computation on a target, keeps every measurement in a tuning log (resuming from it when it
 * already has records of the task), and returns the best program compiled. {@link #build}
 * applies the best logged program without searching.
 *
 * <pre>{@code
 * try (TuneResult r = AutoSchedule.tune(C, Target.cpu(),
 *         TuneOptions.builder().trials(200).logFile(Path.of("matmul.jsonl")).build())) {
 *     r.kernel().call(a, b, c);
 * }
 * CompiledKernel k = AutoSchedule.build(ComputeDAG.of(C), Target.cpu(), Path.of("matmul.jsonl"));
 * }</pre>
 *
 * <p>Records of the same workload measured on another target are never applied: the user is
 * told which targets they were for (a note in the result, a warning through System.Logger, or
 * the message of the exception when they are all there is).
 */
public final class AutoSchedule {
    private static final System.Logger LOG = System.getLogger(AutoSchedule.class.getName());

    private AutoSchedule() {}

    /**
     * Tunes the computation of {@code output} (and everything it reads) for {@code target} with
     * {@link TuneOptions#defaults()}: the card's {@code AutoSchedule.tune(C, Target.CPU)}. The result
     * is the best program compiled, called as a kernel ({@code result.call(a, b, c)}); close it when done.
     */
    public static TuneResult tune(Tensor output, Target target) {
        return tune(output, target, TuneOptions.defaults());
    }

    /** {@link #tune(Tensor, Target)} for a whole DAG (several outputs). */
    public static TuneResult tune(ComputeDAG dag, Target target) {
        return tune(dag, target, TuneOptions.defaults());
    }

    /** Tunes the computation of {@code output} (and everything it reads) for {@code target}. */
    public static TuneResult tune(Tensor output, Target target, TuneOptions options) {
        return tune(ComputeDAG.of(output), target, options);
    }

    /**
     * Tunes {@code dag} for {@code target}: evolutionary search over the task's sketches guided
     * by the learned cost model (or the options' policy), every measurement appended to the
     * options' log file, the best program compiled with the target's backend. Before the best is
     * chosen, the fastest programs are measured again as the measure options say
     * ({@link SearchLoop#remeasure()}; the result's time is the median of the best's measurements).
     * Throws {@link KilnException} when no trial gave a valid program, with the errors
     * by kind and the first message of each.
     */
    public static TuneResult tune(ComputeDAG dag, Target target, TuneOptions options) {
        if (dag == null) throw new KilnException("AutoSchedule.tune: the computation (dag) is null");
        if (target == null) throw new KilnException("AutoSchedule.tune: the target is null");
        if (options == null) throw new KilnException("AutoSchedule.tune: the options are null");
        DotProductLayout.Result packed = DotProductLayout.rewrite(dag, target);
        SearchTask task = withLayoutFree(SearchTask.of(packed.dag(), target), dag, options.layoutFree());
        List<String> notes = new ArrayList<>();
        for (String stage : packed.rewritten()) {
            notes.add("stage '" + stage + "' reads its right operand packed for the dot-product instructions "
                    + "(DotProductLayout)");
        }
        for (String n : packed.notes()) warn(notes, n);
        try (TuningLog log = options.log().map(TuningLog::open).orElseGet(TuningLog::inMemory)) {
            noteDamagedLines(log, notes);
            LogLookup before = log.lookup(task.workloadKey(), task.targetDescription());
            if (before.hasOtherTargets()) warn(notes, before.otherTargetsNote());

            SearchPolicy policy = options.policies().create(task, options.seed());
            Measurer made = options.measurer() == null ? startMeasurer(task, target, options) : null;
            SearchOutcome outcome;
            try {
                Measurer measurer = made != null ? made : options.measurer();
                TuneProgress progress = TuneProgress.forRun(options.progressBar(), options.verbose());
                outcome = new SearchLoop(task, policy, measurer, log, options.limits(), progress).run();
            } finally {
                if (made != null) made.close();
            }
            if (outcome.unreplayable() > 0) {
                warn(
                        notes,
                        outcome.unreplayable() + " logged record(s) of this workload no longer replay on its DAG "
                                + "and were not applied.");
            }
            BestProgram best = outcome.best().orElseThrow(() -> new KilnException(noProgram(task, outcome, before)));
            CompiledKernel kernel = task.layoutFree().isEmpty()
                    ? compile(best.schedule(), target)
                    : LayoutFreeKernel.compile(dag, task, best.schedule(), target);
            return new TuneResult(task, best.schedule(), best.seconds(), outcome, log.file(), notes, kernel);
        }
    }

    /**
     * The best logged program of {@code dag} on {@code target}, compiled, without searching.
     * Throws {@link KilnException} when the log does not exist or has no valid record of this
     * workload on this target; the message says what it has instead (other targets are named).
     */
    public static CompiledKernel build(ComputeDAG dag, Target target, Path logFile) {
        return compile(bestSchedule(dag, target, logFile), target);
    }

    /**
     * The best logged program of {@code dag} tuned with the input placeholders {@code layoutFree} layout-free
     * ({@link TuneOptions.Builder#layoutFree}: its records are keyed apart), compiled to read those weights packed;
     * {@link LayoutFreeKernel#pack} packs each once. Throws {@link KilnException} as {@link #build} does, and naming
     * any name that is not an input placeholder of {@code dag}.
     */
    public static LayoutFreeKernel buildLayoutFree(ComputeDAG dag, Target target, Path logFile, String... layoutFree) {
        if (layoutFree.length == 0) throw new KilnException("buildLayoutFree: no layout-free argument named");
        SearchTask task = task(dag, target, List.of(layoutFree));
        return LayoutFreeKernel.compile(dag, task, bestSchedule(task, logFile), target);
    }

    /** {@link #build(ComputeDAG, Target, Path)} for the computation of {@code output}. */
    public static CompiledKernel build(Tensor output, Target target, Path logFile) {
        return build(ComputeDAG.of(output), target, logFile);
    }

    /** The best logged schedule of {@code dag} on {@code target} (see {@link #build}). */
    public static Schedule bestSchedule(ComputeDAG dag, Target target, Path logFile) {
        return bestSchedule(task(dag, target), logFile);
    }

    /**
     * The best schedule of {@code task} in {@code logFile}: of its workload key (so a task with
     * layout-free arguments finds the programs measured with its weights packed) on its target.
     */
    public static Schedule bestSchedule(SearchTask task, Path logFile) {
        return bestProgram(task, logFile).schedule();
    }

    /**
     * {@link #bestSchedule(SearchTask, Path)} with its cost in the log (the median of its
     * measurements, {@code ProgramCosts}), in seconds; its trial number is not kept in a log: -1.
     */
    public static BestProgram bestProgram(SearchTask task, Path logFile) {
        if (!Files.isRegularFile(logFile)) throw new KilnException("tuning log " + logFile + " does not exist");
        try (TuningLog log = TuningLog.open(logFile)) {
            LogLookup l = log.lookup(task.workloadKey(), task.targetDescription());
            LogRecord best = l.best()
                    .orElseThrow(() -> new KilnException(
                            "cannot build workload " + task.workloadKey() + " from the log: " + l.explanation()));
            if (l.hasOtherTargets()) LOG.log(System.Logger.Level.WARNING, l.otherTargetsNote());
            try {
                Schedule s = best.schedule(task);
                s.replay();
                return new BestProgram(s, l.bestSeconds(), -1);
            } catch (KilnException e) {
                throw new KilnException("the best logged program of workload " + task.workloadKey() + " in " + logFile
                        + " does not replay on this DAG: " + e.getMessage());
            }
        }
    }

    /**
     * The search task of {@code dag} on {@code target}, with the target's hardware parameters
     * ({@link SearchTask#of(ComputeDAG, Target)}); a uint8 x int8 or bfloat16 matmul written plainly reads its right
     * operand packed where the target has the dot-product instructions ({@link DotProductLayout}: the task's DAG is
     * the rewritten one, with the same arguments).
     */
    public static SearchTask task(ComputeDAG dag, Target target) {
        return SearchTask.of(DotProductLayout.rewrite(dag, target).dag(), target);
    }

    /**
     * {@link #task(ComputeDAG, Target)} with the input placeholders named {@code layoutFree} layout-free
     * ({@link SearchTask#withLayoutFree}, by argument position; the key gains {@code " layout_free=[...]"}). A name
     * that is not an input placeholder of {@code dag} (unknown, or an output) throws {@link KilnException} naming
     * it and the inputs there are.
     */
    public static SearchTask task(ComputeDAG dag, Target target, List<String> layoutFree) {
        return withLayoutFree(task(dag, target), dag, layoutFree);
    }

    /** {@code plain}, a task of {@code dag} (rewritten or not: same arguments), with {@code layoutFree} resolved. */
    private static SearchTask withLayoutFree(SearchTask plain, ComputeDAG dag, List<String> layoutFree) {
        if (layoutFree.isEmpty()) return plain;
        List<Integer> positions = new ArrayList<>();
        List<String> inputs = dag.inputs().stream().map(Tensor::name).toList();
        for (String name : layoutFree) {
            int found = -1;
            for (int a = 0; a < dag.arguments().size(); a++) {
                if (dag.arguments().get(a).name().equals(name)) found = a;
            }
            if (found < 0 || !inputs.contains(name)) {
                throw new KilnException("layout-free tensor '" + name + "' is not an input placeholder of the "
                        + "computation" + (found >= 0 ? " (it is an output)" : "") + "; its inputs are " + inputs);
            }
            positions.add(found);
        }
        return plain.withLayoutFree(positions);
    }

    /** The hardware parameters of a target: {@link HardwareParams#of(Target)}. */
    public static HardwareParams hardware(Target target) {
        return HardwareParams.of(target);
    }

    /**
     * Lowers with the target's pipeline (the GPU passes for CUDA, see {@link ScheduleLowerer#forTarget}) and compiles.
     */
    public static CompiledKernel compile(Schedule s, Target target) {
        return compile(s, target, "tuned_" + s.dag().outputs().getFirst().name());
    }

    /** {@link #compile(Schedule, Target)} naming the function {@code name} (made a plain identifier). */
    public static CompiledKernel compile(Schedule s, Target target, String name) {
        name = name.replaceAll("[^A-Za-z0-9_]", "_");
        PrimFunc f = ScheduleLowerer.forTarget(target).lower(task(s.dag(), target), s);
        return Backend.forTarget(target).compile(new PrimFunc(name, f.params(), f.body()), target);
    }

    /**
     * The options' measurer for the target; a failure to start one (no GPU or driver for a CUDA
     * target, no backend) is said with the task and target, and that compiling does not need it.
     */
    private static Measurer startMeasurer(SearchTask task, Target target, TuneOptions options) {
        try {
            return options.measurers().create(target, options.measureOptions().forTarget(target));
        } catch (KilnException e) {
            throw new KilnException(
                    "cannot tune workload " + task.workloadKey() + " for target '" + target
                            + "': tuning measures programs on the target, and no measurer could start: "
                            + e.getMessage()
                            + (target.kind().isGpu()
                                    ? " (compiling for it without tuning still works: Kiln.compile, CudaBackend)"
                                    : ""),
                    e);
        }
    }

    private static String noProgram(SearchTask task, SearchOutcome o, LogLookup before) {
        StringBuilder sb = new StringBuilder("no valid program for workload " + task.workloadKey() + " on target '"
                + task.targetDescription() + "' in " + o.trials() + " trial(s) (stopped: " + o.stopReason() + ")");
        if (o.trials() == 0) sb.append("; the trial budget is 0 and the log has no valid record of the task");
        if (!o.errorsByKind().isEmpty()) sb.append("; errors ").append(o.errorsByKind());
        o.firstErrors()
                .forEach((kind, msg) ->
                        sb.append("\nfirst ").append(kind).append(": ").append(msg));
        if (before.hasOtherTargets()) sb.append('\n').append(before.otherTargetsNote());
        return sb.toString();
    }

    private static void noteDamagedLines(TuningLog log, List<String> notes) {
        List<TuningLog.SkippedLine> skipped = log.skippedLines();
        if (!skipped.isEmpty()) {
            notes.add(skipped.size() + " line(s) of the log could not be read and were skipped (first: line "
                    + skipped.getFirst().line() + ", " + skipped.getFirst().reason() + ").");
        }
    }

    private static void warn(List<String> notes, String message) {
        LOG.log(System.Logger.Level.WARNING, message);
        notes.add(message);
    }
}
