package dev.kiln.autoschedule.measure;

import dev.kiln.autoschedule.SearchTask;
import dev.kiln.ir.KilnException;
import dev.kiln.schedule.Schedule;
import dev.kiln.schedule.layout.LayoutRewrite;
import dev.kiln.target.Target;
import dev.kiln.tir.PrimFunc;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.OptionalLong;
import java.util.Set;

/**
 * Measures programs in a child JVM, so that a program that crashes (a segfault in generated code,
 * an exit) or hangs costs one measurement, not the tuning run.
 *
 * <p>One child at a time runs {@link MeasureWorker}, started with this JVM's java binary, flags
 * and class path (the backends are found there by {@link java.util.ServiceLoader}). For each
 * schedule this process lowers it ({@link ScheduleLowerer}; a failure is {@link MeasureError#LOWER}),
 * writes the program as JSON ({@link dev.kiln.tir.json.PrimFuncJson}) and sends it; the child
 * compiles it ({@link MeasureError#COMPILE}), runs it on the task's seeded inputs, compares the
 * output with the reference ({@link MeasureError#WRONG_RESULT}) and times it. The reference is
 * computed here by the interpreter once per workload and handed over in a file. If no reply comes
 * within {@link MeasureOptions#timeoutSeconds()}, the child is killed
 * ({@link MeasureError#TIMEOUT}); if it dies, the program is a {@link MeasureError#CRASH} with the
 * exit status and the JVM's fatal-error summary. Either way the next program gets a fresh child.
 *
 * <p>Not thread-safe: one tuner thread measures at a time. Close it to stop the child and delete
 * its temporary files (crash logs are kept in {@link #tempDir()}); if the JVM exits first, a
 * shutdown hook does it.
 */
public final class ProcessMeasurer implements Measurer {
    /** Measurers not closed yet: a shutdown hook stops their children and deletes their files. */
    private static final Set<ProcessMeasurer> OPEN =
            Collections.synchronizedSet(Collections.newSetFromMap(new IdentityHashMap<>()));

    static {
        Runtime.getRuntime()
                .addShutdownHook(new Thread(
                        () -> {
                            List<ProcessMeasurer> open;
                            synchronized (OPEN) {
                                open = List.copyOf(OPEN);
                            }
                            for (ProcessMeasurer m : open) m.release(false);
                        },
                        "kiln-measure-cleanup"));
    }

    private final Target target;
    private final MeasureOptions options;
    private final ScheduleLowerer lowerer;
    private final double startSeconds;
    private final Path tempDir;
    private final List<String> command;
    private final ReferenceCache references = new ReferenceCache();
    private final Map<Workload, Path> workloadFiles = new IdentityHashMap<>();
    private final ChildJvm child;
    private final int buildThreads;
    private boolean closed;

    private ProcessMeasurer(Builder b) {
        this.target = b.target;
        this.options = b.options;
        this.lowerer = b.lowerer != null ? b.lowerer : ScheduleLowerer.forTarget(b.target);
        this.startSeconds = b.startSeconds;
        this.buildThreads = b.buildThreads > 0 ? b.buildThreads : BuildThreads.fromProperty();
        try {
            this.tempDir = Files.createTempDirectory("kiln-measure-");
        } catch (IOException e) {
            throw new KilnException("cannot create a temporary directory for the measure worker: " + e.getMessage());
        }
        this.command = WorkerCommand.write(tempDir, b.jvmFlags);
        this.child = new ChildJvm(command, tempDir, startSeconds);
        OPEN.add(this);
    }

    /**
     * A measurer for {@code target} with default lowering and JVM flags; the child starts with the first measurement.
     */
    public static ProcessMeasurer start(Target target, MeasureOptions options) {
        return builder(target).options(options).start();
    }

    public static Builder builder(Target target) {
        return new Builder(target);
    }

    /** Settings of a {@link ProcessMeasurer}. */
    public static final class Builder {
        private final Target target;
        private MeasureOptions options = MeasureOptions.defaults();
        private ScheduleLowerer lowerer;
        private List<String> jvmFlags = List.of();
        private double startSeconds = 120;
        private int buildThreads;

        private Builder(Target target) {
            this.target = Objects.requireNonNull(target, "target");
        }

        public Builder options(MeasureOptions o) {
            this.options = Objects.requireNonNull(o, "options");
            return this;
        }

        /** How schedules become programs (default: {@link ScheduleLowerer#forTarget}). */
        public Builder lowerer(ScheduleLowerer l) {
            this.lowerer = Objects.requireNonNull(l, "lowerer");
            return this;
        }

        /** More flags for the child JVM, after the inherited ones (for instance {@code -Xmx4g}). */
        public Builder jvmFlags(List<String> flags) {
            this.jvmFlags = List.copyOf(flags);
            return this;
        }

        /** How long a child may take to start before the measurer gives up (default 120 s). */
        public Builder startTimeoutSeconds(double s) {
            if (!(s > 0)) throw new KilnException("the start time-out must be positive, got " + s);
            this.startSeconds = s;
            return this;
        }

        /**
         * How many threads the child compiles a batch on before it times the batch's programs one by one
         * (default: {@link BuildThreads#fromProperty()}, the cores unless {@code -Dkiln.measure.buildThreads}
         * says otherwise); 1 compiles and times each program in turn.
         */
        public Builder buildThreads(int n) {
            this.buildThreads = BuildThreads.check(n);
            return this;
        }

        public ProcessMeasurer start() {
            return new ProcessMeasurer(this);
        }
    }

    @Override
    public Target target() {
        return target;
    }

    @Override
    public MeasureOptions options() {
        return options;
    }

    /** Where the worker's files live: the argument file, the workload files, crash logs. */
    public Path tempDir() {
        return tempDir;
    }

    /** How many threads the child compiles a batch on (1: each program compiled and timed in turn). */
    public int buildThreads() {
        return buildThreads;
    }

    /** Programs per build thread in a synchronous caller's batch (a long compile is balanced against short ones). */
    static final int PROGRAMS_PER_BUILD_THREAD = 4;

    /** {@link #PROGRAMS_PER_BUILD_THREAD} per build thread; 1 when the child compiles on one thread. */
    @Override
    public int batchSize() {
        return buildThreads < 2 ? 1 : PROGRAMS_PER_BUILD_THREAD * buildThreads;
    }

    /** How many child JVMs have been started (1 after the first measurement, one more after each crash or time-out). */
    public int workerStarts() {
        return child.starts();
    }

    /** The process id of the running child, if one runs. */
    public OptionalLong workerPid() {
        return child.pid();
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
        Path file = workloadFile(workload);
        if (buildThreads < 2 || schedules.size() < 2) {
            List<MeasureResult> out = new ArrayList<>();
            for (Schedule s : schedules) out.add(measureOne(task, s, file));
            return out;
        }
        return measureBatch(task, schedules, file);
    }

    private MeasureResult measureOne(SearchTask task, Schedule schedule, Path file) {
        long t0 = System.nanoTime();
        Lowered l = lower(task, schedule);
        MeasureResult r = l.failure() != null
                ? l.failure()
                : child.measure(l.request(target, file, options), options.timeoutSeconds());
        return r.withWallSeconds((System.nanoTime() - t0) / 1e9);
    }

    /**
     * Lowers every schedule here, then has the child compile the lowered programs on {@link #buildThreads()}
     * threads before it times them one by one ({@link ChildJvm#measureBatch}). A program's wall time is its
     * lowering, its share of the batch's build and the wait for its own result.
     */
    private List<MeasureResult> measureBatch(SearchTask task, List<Schedule> schedules, Path file) {
        MeasureResult[] out = new MeasureResult[schedules.size()];
        double[] lowerSeconds = new double[schedules.size()];
        List<Integer> sent = new ArrayList<>();
        List<java.util.function.LongFunction<String>> requests = new ArrayList<>();
        for (int i = 0; i < schedules.size(); i++) {
            long t0 = System.nanoTime();
            Lowered l = lower(task, schedules.get(i));
            lowerSeconds[i] = (System.nanoTime() - t0) / 1e9;
            if (l.failure() != null) {
                out[i] = l.failure().withWallSeconds(lowerSeconds[i]);
            } else {
                sent.add(i);
                requests.add(l.request(target, file, options));
            }
        }
        List<MeasureResult> measured = child.measureBatch(requests, buildThreads, options.timeoutSeconds());
        for (int k = 0; k < sent.size(); k++) {
            int i = sent.get(k);
            MeasureResult r = measured.get(k);
            out[i] = r.withWallSeconds(r.wallSeconds() + lowerSeconds[i]);
        }
        return List.of(out);
    }

    /** A lowered program, or the {@link MeasureError#LOWER} result of a schedule that does not lower. */
    private record Lowered(PrimFunc func, LayoutRewrite.Result program, MeasureResult failure) {
        java.util.function.LongFunction<String> request(Target target, Path file, MeasureOptions options) {
            return id -> WorkerProtocol.measureRequest(
                    id, target.toString(), file.toString(), options, func, program.layouts());
        }
    }

    private Lowered lower(SearchTask task, Schedule schedule) {
        try {
            LayoutRewrite.Result program = task.rewriteLayouts(schedule);
            return new Lowered(lowerer.lower(task, program.schedule()), program, null);
        } catch (RuntimeException | StackOverflowError e) {
            return new Lowered(null, null, MeasureResult.failed(MeasureError.LOWER, MeasureLoop.describe(e), 0, 0));
        }
    }

    private Path workloadFile(Workload w) {
        Path f = workloadFiles.get(w);
        if (f == null) {
            f = tempDir.resolve("workload-" + workloadFiles.size() + ".bin");
            WorkloadFile.write(w, f);
            workloadFiles.put(w, f);
        }
        return f;
    }

    /** Stops the child and deletes the workload and argument files; the directory stays if it holds crash logs. */
    @Override
    public void close() {
        release(true);
    }

    /** Stops the child (asking it to exit when {@code gently}, else killing it) and deletes the files. */
    private synchronized void release(boolean gently) {
        if (closed) return;
        closed = true;
        OPEN.remove(this);
        child.stop(gently);
        references.close();
        try {
            for (Path f : workloadFiles.values()) Files.deleteIfExists(f);
            Files.deleteIfExists(tempDir.resolve("worker.args"));
            try (var left = Files.list(tempDir)) {
                if (left.findAny().isEmpty()) Files.delete(tempDir);
            }
        } catch (IOException e) {
            // temporary files left behind: not worth failing the caller over
        }
    }
}
