package dev.kiln.autoschedule.measure;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.kiln.autoschedule.SearchTask;
import dev.kiln.ir.KilnException;
import dev.kiln.schedule.Schedule;
import dev.kiln.schedule.layout.LayoutRewrite;
import dev.kiln.target.Target;
import dev.kiln.tir.PrimFunc;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Objects;

/**
 * Measurement split between two machines, for a measurer that sends programs elsewhere (the {@code kiln-cluster}
 * module): the tuner's side ({@link Preparer}) lowers each schedule to a self-contained program and computes each
 * task's workload (seeded inputs and the interpreter's reference outputs) once, as bytes to ship; the worker's side
 * ({@link Executor}) measures such a program against such a workload in its own child JVM, exactly as {@link
 * ProcessMeasurer} does (crash and hang isolation, the same {@link MeasureLoop}, the same checks).
 */
public final class RemoteMeasurement {
    private RemoteMeasurement() {}

    /**
     * A program ready to be measured elsewhere: the {@link WorkerProtocol} request (the lowered program, its packed
     * layouts, the target and the options) as JSON text, without request id and workload file.
     */
    public record Program(String request) {
        public Program {
            Objects.requireNonNull(request, "request");
        }
    }

    /** A lowered program, or the {@link MeasureError#LOWER} result of a schedule that does not lower. */
    public record Prepared(Program program, MeasureResult failure) {
        public boolean ok() {
            return program != null;
        }
    }

    /** The tuner's side: lowers schedules and makes the workloads. Thread-safe. */
    public static final class Preparer implements AutoCloseable {
        private final Target target;
        private final MeasureOptions options;
        private final ScheduleLowerer lowerer;
        private final ReferenceCache references = new ReferenceCache();

        public Preparer(Target target, MeasureOptions options) {
            this(target, options, ScheduleLowerer.forTarget(target));
        }

        public Preparer(Target target, MeasureOptions options, ScheduleLowerer lowerer) {
            this.target = Objects.requireNonNull(target, "target");
            this.options = Objects.requireNonNull(options, "options");
            this.lowerer = Objects.requireNonNull(lowerer, "lowerer");
        }

        /**
         * The workload of {@code task} in the form a worker reads (the seed, the arguments, the reference outputs),
         * computed once per workload key.
         */
        public byte[] workloadBytes(SearchTask task) {
            Workload w = references.get(task, options.seed(), options.checkCorrectness());
            try {
                Path f = Files.createTempFile("kiln-workload-", ".bin");
                try {
                    WorkloadFile.write(w, f);
                    return Files.readAllBytes(f);
                } finally {
                    Files.deleteIfExists(f);
                }
            } catch (IOException e) {
                throw new KilnException(
                        "task " + task.workloadKey() + ": cannot write its workload: " + e.getMessage());
            }
        }

        /** Lowers {@code schedule} (after checking it is for the task, and the task for this target). */
        public Prepared prepare(SearchTask task, Schedule schedule) {
            Measurers.checkTask(task, List.of(schedule), target);
            try {
                LayoutRewrite.Result program = task.rewriteLayouts(schedule);
                PrimFunc func = lowerer.lower(task, program.schedule());
                String request =
                        WorkerProtocol.measureRequest(0, target.toString(), "", options, func, program.layouts());
                return new Prepared(new Program(request), null);
            } catch (RuntimeException | StackOverflowError e) {
                return new Prepared(null, MeasureResult.failed(MeasureError.LOWER, MeasureLoop.describe(e), 0, 0));
            }
        }

        @Override
        public void close() {
            references.close();
        }
    }

    /** The worker's side: one child JVM at a time, started with this JVM's class path. Not thread-safe. */
    public static final class Executor implements AutoCloseable {
        private final Path tempDir;
        private final ChildJvm child;

        public Executor(List<String> jvmFlags, double startSeconds) {
            try {
                this.tempDir = Files.createTempDirectory("kiln-remote-measure-");
            } catch (IOException e) {
                throw new KilnException(
                        "cannot create a temporary directory for the measure worker: " + e.getMessage());
            }
            this.child = new ChildJvm(WorkerCommand.write(tempDir, jvmFlags), tempDir, startSeconds);
        }

        /** Where the workload files and crash logs go. */
        public Path tempDir() {
            return tempDir;
        }

        /** How many child JVMs have been started. */
        public int childStarts() {
            return child.starts();
        }

        /**
         * Measures {@code program} on the workload in {@code workloadFile} (written from {@link
         * Preparer#workloadBytes}); the child is killed after {@code timeoutSeconds} without an answer.
         */
        public MeasureResult measure(Program program, Path workloadFile, double timeoutSeconds) {
            ObjectNode request;
            try {
                request = (ObjectNode) WorkerProtocol.parse(program.request());
            } catch (RuntimeException e) {
                return MeasureResult.failed(
                        MeasureError.RUNTIME, "the worker could not read the program: " + e.getMessage(), 0, 0);
            }
            request.put("workload", workloadFile.toString());
            long t0 = System.nanoTime();
            MeasureResult r = child.measure(id -> WorkerProtocol.write(request.put("id", id)), timeoutSeconds);
            return r.withWallSeconds((System.nanoTime() - t0) / 1e9);
        }

        @Override
        public void close() {
            child.close();
        }
    }
}
