package dev.kiln.autoschedule.measure;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * The child side of a batch request ({@link WorkerProtocol#batchRequest}): the worker first compiles
 * every program of the batch on {@code threads} threads (each LLVM module in its own context; the
 * backend links them one at a time), writing a progress line ({@link WorkerProtocol#compiled}) as
 * each compile ends, and only when all are built checks and times them one after the other, on
 * this thread, with nothing else running, writing one reply per program in the batch's order. A
 * compile error is that program's reply; a program whose compile alone took longer than its
 * time-out is a {@link MeasureError#TIMEOUT} without being run, as the serial path would have
 * killed it. After a reply that leaves the JVM unusable ({@code exiting}) the worker halts; the
 * parent measures the rest of the batch in a fresh child.
 */
final class WorkerBatch {
    private final MeasureWorker worker;
    private ExecutorService pool;
    private int poolThreads;

    WorkerBatch(MeasureWorker worker) {
        this.worker = worker;
    }

    void run(JsonNode request, PrintStream protocol) {
        int threads = BuildThreads.check(Math.max(1, request.path("threads").asInt(1)));
        List<JsonNode> programs = new ArrayList<>();
        request.path("programs").forEach(programs::add);
        ExecutorService p = pool(threads);
        List<Future<MeasureWorker.Built>> futures = new ArrayList<>();
        for (JsonNode program : programs) {
            futures.add(p.submit(() -> {
                MeasureWorker.Built b = worker.build(program);
                protocol.println(WorkerProtocol.compiled(b.id(), b.compileSeconds()));
                return b;
            }));
        }
        List<MeasureWorker.Built> built = new ArrayList<>();
        for (int i = 0; i < futures.size(); i++) {
            built.add(await(futures.get(i), programs.get(i).path("id").asLong(-1)));
        }
        for (MeasureWorker.Built b : built) {
            WorkerProtocol.Reply reply = tooSlowToCompile(b);
            if (reply == null) reply = worker.finish(b);
            protocol.println(WorkerProtocol.reply(reply));
            if (protocol.checkError()) Runtime.getRuntime().halt(4);
            if (reply.exiting()) Runtime.getRuntime().halt(3);
        }
    }

    /** A time-out reply for a compiled program whose compile used up its whole time-out, else null. */
    private static WorkerProtocol.Reply tooSlowToCompile(MeasureWorker.Built b) {
        if (!(b instanceof MeasureWorker.Built.Ready r)) return null;
        double limit = r.options().timeoutSeconds();
        if (r.compileSeconds() < limit) return null;
        r.kernel().close();
        return new WorkerProtocol.Reply(
                r.id(),
                MeasureError.TIMEOUT,
                String.format(
                        java.util.Locale.ROOT,
                        "compiling took %.1f s, more than the %.1f s allowed for compiling, checking and timing",
                        r.compileSeconds(),
                        limit),
                new double[0],
                r.compileSeconds(),
                false);
    }

    private static MeasureWorker.Built await(Future<MeasureWorker.Built> f, long id) {
        try {
            return f.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return new MeasureWorker.Built.Done(new WorkerProtocol.Reply(
                    id, MeasureError.RUNTIME, "interrupted while compiling", new double[0], 0, true));
        } catch (ExecutionException e) {
            Throwable c = e.getCause();
            boolean fatal = c instanceof VirtualMachineError;
            return new MeasureWorker.Built.Done(new WorkerProtocol.Reply(
                    id,
                    fatal ? MeasureError.CRASH : MeasureError.COMPILE,
                    (fatal ? "the worker JVM failed: " : "") + MeasureLoop.describe(c),
                    new double[0],
                    0,
                    fatal));
        }
    }

    private ExecutorService pool(int threads) {
        if (pool == null || poolThreads != threads) {
            if (pool != null) pool.shutdown();
            pool = Executors.newFixedThreadPool(threads, r -> {
                Thread t = new Thread(r, "kiln-measure-build");
                t.setDaemon(true);
                return t;
            });
            poolThreads = threads;
        }
        return pool;
    }
}
