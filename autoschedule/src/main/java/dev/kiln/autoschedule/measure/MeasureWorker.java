package dev.kiln.autoschedule.measure;

import com.fasterxml.jackson.databind.JsonNode;
import dev.kiln.runtime.NDArray;
import dev.kiln.target.Backend;
import dev.kiln.target.CompiledKernel;
import dev.kiln.target.Target;
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

    private final Map<String, Workload> workloads = new LinkedHashMap<>(8, 0.75f, true);
    private CacheFlusher flusher;

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
            reply = worker.measure(request);
            protocol.println(WorkerProtocol.reply(reply));
            if (protocol.checkError()) Runtime.getRuntime().halt(4);
            if (reply.exiting()) Runtime.getRuntime().halt(3);
        }
        System.exit(0);
    }

    private WorkerProtocol.Reply measure(JsonNode request) {
        long id = request.path("id").asLong(-1);
        double compileSeconds = 0;
        try {
            String refused = FaultInjection.apply(request);
            if (refused != null) return failed(id, MeasureError.RUNTIME, refused, 0);
            MeasureOptions options = WorkerProtocol.options(request.path("options"));
            PrimFunc func;
            try {
                func = PrimFuncJson.fromTree(request.get("func"));
            } catch (RuntimeException | StackOverflowError e) {
                return failed(
                        id, MeasureError.LOWER, "the worker could not read the program: " + MeasureLoop.describe(e), 0);
            }
            Workload workload;
            Target target;
            Backend backend;
            try {
                workload = workload(request.path("workload").asText()).packed(WorkerProtocol.layouts(request));
                target = Target.parse(request.path("target").asText());
                ProgramMeasurer pm = programMeasurer(target, options);
                if (pm != null) return measureProgram(id, pm, func, workload);
                backend = backend(target);
            } catch (RuntimeException e) {
                return failed(
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
                return failed(
                        id,
                        MeasureError.COMPILE,
                        backend.name() + ": " + MeasureLoop.describe(e),
                        (System.nanoTime() - t0) / 1e9);
            }
            compileSeconds = (System.nanoTime() - t0) / 1e9;
            try (kernel) {
                if (options.flushCache() && flusher == null) flusher = new CacheFlusher();
                MeasureLoop.Outcome out = ProgramRunner.run(kernel::call, func.params(), workload, options, flusher);
                return new WorkerProtocol.Reply(id, out.error(), out.message(), out.costs(), compileSeconds, false);
            }
        } catch (VirtualMachineError e) {
            return new WorkerProtocol.Reply(
                    id,
                    MeasureError.CRASH,
                    "the worker JVM failed: " + MeasureLoop.describe(e),
                    new double[0],
                    compileSeconds,
                    true);
        } catch (RuntimeException e) {
            return failed(id, MeasureError.RUNTIME, MeasureLoop.describe(e), compileSeconds);
        }
    }

    private static WorkerProtocol.Reply failed(long id, MeasureError error, String message, double compileSeconds) {
        return new WorkerProtocol.Reply(id, error, message, new double[0], compileSeconds, false);
    }

    private Workload workload(String file) {
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
    private ProgramMeasurer programMeasurer(Target target, MeasureOptions options) {
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

    private Backend backend(Target target) {
        return backends.computeIfAbsent(target.toString(), k -> Backend.forTarget(target));
    }
}
