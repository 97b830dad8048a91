package dev.kiln.autoschedule.measure;

import com.fasterxml.jackson.databind.JsonNode;
import dev.kiln.runtime.NDArray;
import dev.kiln.target.Backend;
import dev.kiln.target.CompiledKernel;
import dev.kiln.target.Target;
import dev.kiln.target.WorkerPool;
import dev.kiln.tir.PrimFunc;
import dev.kiln.tir.json.PrimFuncJson;
import java.io.BufferedReader;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The main class of the measuring child JVM that {@link ProcessMeasurer} starts: it reads
 * requests from standard input, compiles each program with the target's {@link Backend}, runs it
 * with {@link ProgramRunner} (the {@link MeasureLoop}) and answers on standard output
 * ({@link WorkerProtocol}). Whatever else writes to {@code System.out} goes to standard error
 * instead, so replies stay parseable.
 * A program that crashes or hangs takes only this process down; the parent records it and starts
 * another. The worker also stops when its parent process ends.
 */
public final class MeasureWorker {
    /** Workload files kept loaded (the most recently used). */
    private static final int WORKLOADS_KEPT = 4;

    private final Map<String, Backend> backends = new HashMap<>();
    /** The providers' program measurers by target and options ({@link ProgramMeasurer}); null: none. */
    private final Map<String, ProgramMeasurer> programMeasurers = new HashMap<>();
    /** The fastest timed program per workload file, and the bar above which a program is timed once. */
    private final SlowPrograms slow = new SlowPrograms();

    private final Map<String, Workload> workloads = new LinkedHashMap<>(8, 0.75f, true);
    private CacheFlusher flusher;
    private WorkerBatch batches;

    private MeasureWorker() {}

    public static void main(String[] args) throws IOException {
        PrintStream protocol = new PrintStream(new FileOutputStream(FileDescriptor.out), true, StandardCharsets.UTF_8);
        System.setOut(System.err);
        ProcessHandle.current().parent().ifPresent(p -> p.onExit()
                .thenRun(() -> Runtime.getRuntime().halt(2)));
        protocol.println(WorkerProtocol.ready(ProcessHandle.current().pid()));
        MeasureWorker worker = new MeasureWorker();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            if (line.isBlank()) continue;
            WorkerProtocol.Reply reply;
            JsonNode request;
            try {
                request = WorkerProtocol.parse(line);
            } catch (RuntimeException e) {
                protocol.println(WorkerProtocol.reply(new WorkerProtocol.Reply(
                        -1,
                        MeasureError.RUNTIME,
                        "the worker could not read the request: " + MeasureLoop.describe(e),
                        new double[0],
                        0,
                        false)));
                continue;
            }
            if (request.path("op").asText().equals("exit")) break;
            if (request.path("op").asText().equals("batch")) {
                worker.batches().run(request, protocol);
                continue;
            }
            reply = worker.measure(request);
            protocol.println(WorkerProtocol.reply(reply));
            if (protocol.checkError()) Runtime.getRuntime().halt(4);
            if (reply.exiting()) Runtime.getRuntime().halt(3);
        }
        System.exit(0);
    }

    WorkerProtocol.Reply measure(JsonNode request) {
        return finish(build(request));
    }

    /** A program after its build: a reply already, a compiled kernel to time, or one a provider measures. */
    sealed interface Built {
        /** The program's id. */
        long id();

        /** Seconds its compile took (0 when it was not compiled here). */
        double compileSeconds();

        /** Nothing left to do: the reply (an error). */
        record Done(WorkerProtocol.Reply reply) implements Built {
            @Override
            public long id() {
                return reply.id();
            }

            @Override
            public double compileSeconds() {
                return reply.compileSeconds();
            }
        }

        /** Compiled: to be checked and timed. */
        record Ready(
                long id,
                CompiledKernel kernel,
                PrimFunc func,
                String workloadFile,
                Workload workload,
                MeasureOptions options,
                double compileSeconds,
                WorkerPool pool,
                Backend backend,
                Target target)
                implements Built {}

        /** Measured whole (compile included) by a provider's {@link ProgramMeasurer} when its turn comes. */
        record Deferred(long id, ProgramMeasurer measurer, PrimFunc func, Workload workload) implements Built {
            @Override
            public double compileSeconds() {
                return 0;
            }
        }
    }

    /** Reads and compiles one program of {@code request}; safe to call from several threads at once. */
    Built build(JsonNode request) {
        long id = request.path("id").asLong(-1);
        double compileSeconds = 0;
        try {
            String refused = FaultInjection.apply(request);
            if (refused != null) return done(id, MeasureError.RUNTIME, refused, 0);
            MeasureOptions options = WorkerProtocol.options(request.path("options"));
            PrimFunc func;
            try {
                func = PrimFuncJson.fromTree(request.get("func"));
            } catch (RuntimeException | StackOverflowError e) {
                return done(
                        id, MeasureError.LOWER, "the worker could not read the program: " + MeasureLoop.describe(e), 0);
            }
            Workload workload;
            Target target;
            Backend backend;
            try {
                workload = workload(request.path("workload").asText()).packed(WorkerProtocol.layouts(request));
                target = Target.parse(request.path("target").asText());
                ProgramMeasurer pm = programMeasurer(target, options);
                if (pm != null) return new Built.Deferred(id, pm, func, workload);
                backend = backend(target);
            } catch (RuntimeException e) {
                return done(
                        id,
                        MeasureError.RUNTIME,
                        "the worker cannot set up the measurement: " + MeasureLoop.describe(e),
                        0);
            }
            CompiledKernel kernel;
            long t0 = System.nanoTime();
            try {
                kernel = backend.compile(func, target);
            } catch (RuntimeException | LinkageError | StackOverflowError e) {
                return done(
                        id,
                        MeasureError.COMPILE,
                        backend.name() + ": " + MeasureLoop.describe(e),
                        (System.nanoTime() - t0) / 1e9);
            }
            compileSeconds = (System.nanoTime() - t0) / 1e9;
            return new Built.Ready(
                    id,
                    kernel,
                    func,
                    request.path("workload").asText(),
                    workload,
                    options,
                    compileSeconds,
                    backend.workerPool(target),
                    backend,
                    target);
        } catch (VirtualMachineError e) {
            return new Built.Done(vmFailed(id, e, compileSeconds));
        } catch (RuntimeException e) {
            return done(id, MeasureError.RUNTIME, MeasureLoop.describe(e), compileSeconds);
        }
    }

    /** Checks and times a built program (one at a time: nothing else runs in this JVM meanwhile). */
    WorkerProtocol.Reply finish(Built built) {
        return switch (built) {
            case Built.Done d -> d.reply();
            case Built.Deferred d -> {
                try {
                    yield measureProgram(d.id(), d.measurer(), d.func(), d.workload());
                } catch (VirtualMachineError e) {
                    yield vmFailed(d.id(), e, 0);
                } catch (RuntimeException e) {
                    yield failed(d.id(), MeasureError.RUNTIME, MeasureLoop.describe(e), 0);
                }
            }
            case Built.Ready r -> {
                try (CompiledKernel kernel = r.kernel()) {
                    MeasureOptions options = r.options();
                    if (options.flushCache() && flusher == null) flusher = CacheFlusher.of(r.backend(), r.target());
                    MeasureLoop.Outcome out = ProgramRunner.run(
                            ProgramRunner.Kernel.of(kernel),
                            r.func().params(),
                            r.workload(),
                            options,
                            flusher,
                            r.pool(),
                            slow.bar(r.workloadFile()),
                            // the JVM backend's kernels need the whole warm-up for C2 to compile them at all
                            dev.kiln.autoschedule.annotate.CheckJvmTiles.isJvm(r.target())
                                    ? Double.POSITIVE_INFINITY
                                    : slow.promising(r.workloadFile()));
                    slow.timed(r.workloadFile(), out.costs());
                    yield new WorkerProtocol.Reply(
                            r.id(), out.error(), out.message(), out.costs(), r.compileSeconds(), false);
                } catch (VirtualMachineError e) {
                    yield vmFailed(r.id(), e, r.compileSeconds());
                } catch (RuntimeException e) {
                    yield failed(r.id(), MeasureError.RUNTIME, MeasureLoop.describe(e), r.compileSeconds());
                }
            }
        };
    }

    private static WorkerProtocol.Reply vmFailed(long id, VirtualMachineError e, double compileSeconds) {
        return new WorkerProtocol.Reply(
                id,
                MeasureError.CRASH,
                "the worker JVM failed: " + MeasureLoop.describe(e),
                new double[0],
                compileSeconds,
                true);
    }

    private static Built done(long id, MeasureError error, String message, double compileSeconds) {
        return new Built.Done(failed(id, error, message, compileSeconds));
    }

    private WorkerBatch batches() {
        if (batches == null) batches = new WorkerBatch(this);
        return batches;
    }

    private static WorkerProtocol.Reply failed(long id, MeasureError error, String message, double compileSeconds) {
        return new WorkerProtocol.Reply(id, error, message, new double[0], compileSeconds, false);
    }

    private synchronized Workload workload(String file) {
        Workload w = workloads.get(file);
        if (w == null) {
            w = WorkloadFile.read(Path.of(file));
            workloads.put(file, w);
            if (workloads.size() > WORKLOADS_KEPT) {
                var eldest = workloads.entrySet().iterator().next();
                eldest.getValue().close();
                workloads.remove(eldest.getKey());
            }
        }
        return w;
    }

    /** The measurer a provider offers for {@code target} when it measures lowered programs, else null. */
    private synchronized ProgramMeasurer programMeasurer(Target target, MeasureOptions options) {
        String key = target + "|" + WorkerProtocol.options(options);
        if (programMeasurers.containsKey(key)) return programMeasurers.get(key);
        ProgramMeasurer found = null;
        for (MeasurerProvider p : MeasurerProviders.available()) {
            if (!p.supports(target)) continue;
            Measurer m = p.start(target, options);
            if (m instanceof ProgramMeasurer pm) found = pm;
            else m.close();
            break;
        }
        programMeasurers.put(key, found);
        return found;
    }

    private static WorkerProtocol.Reply measureProgram(long id, ProgramMeasurer pm, PrimFunc func, Workload workload) {
        int inputs = (int) workload.args().stream().filter(ArgumentSpec::input).count();
        NDArray[] args = workload.allocate(func.params());
        try {
            MeasureResult r = pm.measureProgram(func, args, inputs, workload.references());
            return new WorkerProtocol.Reply(
                    id, r.error(), r.errorMessage(), r.costsSeconds(), r.compileSeconds(), false);
        } finally {
            for (NDArray a : args) a.close();
        }
    }

    private synchronized Backend backend(Target target) {
        return backends.computeIfAbsent(target.toString(), k -> Backend.forTarget(target));
    }
}
