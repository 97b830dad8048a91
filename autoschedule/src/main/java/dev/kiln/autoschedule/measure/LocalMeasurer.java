package dev.kiln.autoschedule.measure;

import dev.kiln.autoschedule.SearchTask;
import dev.kiln.interp.Interpreter;
import dev.kiln.interp.Program;
import dev.kiln.ir.KilnException;
import dev.kiln.schedule.Schedule;
import dev.kiln.schedule.layout.LayoutRewrite;
import dev.kiln.target.Backend;
import dev.kiln.target.CompiledKernel;
import dev.kiln.target.Target;
import dev.kiln.target.WorkerPool;
import dev.kiln.tir.PrimFunc;
import java.util.ArrayList;
import java.util.List;

/**
 * Measures programs in this JVM, with the same lowering, checks and timing as
 * {@link ProcessMeasurer} but no child process: for tests, for the interpreter, and for backends
 * that cannot crash the JVM.
 *
 * <p><b>Unsafe for programs that crash or hang.</b> A program that faults in native code kills
 * this JVM, and one that never ends blocks the caller forever: {@link MeasureOptions#timeoutSeconds()}
 * is not enforced here, and {@link MeasureError#CRASH} and {@link MeasureError#TIMEOUT} never
 * occur. Exceptions a program throws are still {@link MeasureError#RUNTIME}. Use
 * {@link ProcessMeasurer} to tune generated native code.
 */
public final class LocalMeasurer implements Measurer {
    private final Target target;
    private final Backend backend;
    private final MeasureOptions options;
    private final ScheduleLowerer lowerer;
    private final ReferenceCache references = new ReferenceCache();
    private CacheFlusher flusher;
    private boolean closed;

    private LocalMeasurer(Target target, Backend backend, MeasureOptions options, ScheduleLowerer lowerer) {
        this.target = target;
        this.backend = backend;
        this.options = options;
        this.lowerer = lowerer;
    }

    /** Compiles with the backend {@link Backend#forTarget} finds for {@code target}. */
    public static LocalMeasurer of(Target target, MeasureOptions options) {
        return of(target, options, ScheduleLowerer.forTarget(target));
    }

    /** Compiles with the backend for {@code target}, lowering with {@code lowerer}. */
    public static LocalMeasurer of(Target target, MeasureOptions options, ScheduleLowerer lowerer) {
        return new LocalMeasurer(target, Backend.forTarget(target), options, lowerer);
    }

    /**
     * Runs programs in the reference {@link Interpreter} (no compilation: compile time is the
     * interpreter's closure building). Its target is the host CPU ({@link Target#cpu()}).
     */
    public static LocalMeasurer interpreter(MeasureOptions options) {
        Target host = Target.cpu();
        return new LocalMeasurer(host, null, options, ScheduleLowerer.forTarget(host));
    }

    @Override
    public Target target() {
        return target;
    }

    @Override
    public MeasureOptions options() {
        return options;
    }

    /** How many reference outputs the interpreter has computed (one per workload measured). */
    public int referenceComputations() {
        return references.computations();
    }

    @Override
    public void prepare(List<SearchTask> tasks, int threads) {
        if (closed) throw new KilnException("this measurer is closed");
        references.prepare(tasks, options.seed(), options.checkCorrectness(), threads);
    }

    @Override
    public List<MeasureResult> measure(SearchTask task, List<Schedule> schedules) {
        if (closed) throw new KilnException("this measurer is closed");
        Measurers.checkTask(task, schedules, target);
        Workload workload = references.get(task, options.seed(), options.checkCorrectness());
        List<MeasureResult> out = new ArrayList<>();
        for (Schedule s : schedules) {
            long t0 = System.nanoTime();
            out.add(measureOne(task, s, workload).withWallSeconds((System.nanoTime() - t0) / 1e9));
        }
        return out;
    }

    private MeasureResult measureOne(SearchTask task, Schedule schedule, Workload workload) {
        PrimFunc func;
        try {
            LayoutRewrite.Result program = task.rewriteLayouts(schedule);
            func = lowerer.lower(task, program.schedule());
            workload = workload.packed(program.layouts());
        } catch (RuntimeException | StackOverflowError e) {
            return MeasureResult.failed(MeasureError.LOWER, MeasureLoop.describe(e), 0, 0);
        }
        if (options.flushCache() && flusher == null) flusher = CacheFlusher.of(backend, target);
        long t0 = System.nanoTime();
        if (backend == null) {
            Program p;
            try {
                p = Interpreter.compile(func);
            } catch (RuntimeException | StackOverflowError e) {
                return MeasureResult.failed(
                        MeasureError.COMPILE,
                        "interpreter: " + MeasureLoop.describe(e),
                        (System.nanoTime() - t0) / 1e9,
                        0);
            }
            return ProgramRunner.run(p::run, func.params(), workload, options, flusher, WorkerPool.NONE)
                    .toResult((System.nanoTime() - t0) / 1e9);
        }
        CompiledKernel kernel;
        try {
            kernel = backend.compile(func, target);
        } catch (RuntimeException | LinkageError | StackOverflowError e) {
            return MeasureResult.failed(
                    MeasureError.COMPILE,
                    backend.name() + ": " + MeasureLoop.describe(e),
                    (System.nanoTime() - t0) / 1e9,
                    0);
        }
        double compileSeconds = (System.nanoTime() - t0) / 1e9;
        try (kernel) {
            return ProgramRunner.run(
                            ProgramRunner.Kernel.of(kernel),
                            func.params(),
                            workload,
                            options,
                            flusher,
                            backend.workerPool(target))
                    .toResult(compileSeconds);
        }
    }

    @Override
    public void close() {
        closed = true;
        references.close();
    }
}
