package dev.kiln.autoschedule.measure;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import java.util.function.LongFunction;

/**
 * The child JVM side of {@link ProcessMeasurer} and {@link RemoteMeasurement.Executor}: it starts a {@link
 * MeasureWorker} when needed, sends one request, and turns the answer into a {@link MeasureResult}; a child that dies
 * ({@link MeasureError#CRASH}) or does not answer within the time-out ({@link MeasureError#TIMEOUT}, the child is
 * killed) is replaced for the next program. Not thread-safe.
 */
final class ChildJvm implements AutoCloseable {
    private final List<String> command;
    private final Path tempDir;
    private final double startSeconds;
    private WorkerProcess worker;
    private int starts;
    private long nextId;

    ChildJvm(List<String> command, Path tempDir, double startSeconds) {
        this.command = List.copyOf(command);
        this.tempDir = tempDir;
        this.startSeconds = startSeconds;
    }

    int starts() {
        return starts;
    }

    OptionalLong pid() {
        return worker != null && worker.isAlive() ? OptionalLong.of(worker.pid()) : OptionalLong.empty();
    }

    /** Sends the request that {@code request} writes for a fresh id and waits up to {@code timeoutSeconds}. */
    MeasureResult measure(LongFunction<String> request, double timeoutSeconds) {
        long id = nextId++;
        String line = request.apply(id);
        if (worker == null || !worker.isAlive()) start();
        WorkerProcess w = worker;
        return result(w.request(line, timeoutSeconds), w, id, timeoutSeconds);
    }

    /** The answer {@code a} of child {@code w} to request {@code id} as a result; a child that failed is discarded. */
    private MeasureResult result(WorkerProcess.Answer a, WorkerProcess w, long id, double timeoutSeconds) {
        return switch (a) {
            case WorkerProcess.Answer.Replied rep -> {
                WorkerProtocol.Reply reply = WorkerProtocol.parseReply(rep.reply());
                if (reply.id() != id) {
                    discard(w);
                    yield MeasureResult.failed(
                            MeasureError.CRASH,
                            "the worker answered request " + reply.id() + " instead of " + id + ": " + reply.message(),
                            0,
                            0);
                }
                if (reply.exiting()) discard(w);
                yield reply.error() == MeasureError.NONE
                        ? MeasureResult.ok(reply.costs(), reply.compileSeconds(), 0)
                        : MeasureResult.failed(reply.error(), reply.message(), reply.compileSeconds(), 0);
            }
            case WorkerProcess.Answer.Died d -> {
                discard(w);
                yield MeasureResult.failed(MeasureError.CRASH, d.reason(), 0, 0);
            }
            case WorkerProcess.Answer.TimedOut t -> {
                discard(w);
                yield MeasureResult.failed(
                        MeasureError.TIMEOUT,
                        "no result after " + timeoutSeconds
                                + " s (compiling, checking and timing); the worker was killed",
                        0,
                        0);
            }
        };
    }

    /**
     * Measures {@code requests} (one program each, in order) as one batch: the child compiles them all on
     * {@code threads} threads, then times them one by one ({@link WorkerBatch}). Results are those of
     * {@link #measure} for each: a child that stalls while compiling (no program finished within
     * {@code timeoutSeconds}) is killed, the programs it was compiling (one per build thread, the first unfinished
     * ones) are {@link MeasureError#TIMEOUT}s and the rest of the batch goes to a fresh child (measured again the
     * serial way, a stalled program took that time-out twice: 40 s of a tune's budget); a child that dies while
     * compiling is killed and the whole batch is measured again the serial way, which isolates the program at fault;
     * one that dies or hangs while timing a program costs that program (its time-out is what
     * its compile left of {@code timeoutSeconds}), and the rest of the batch goes to a fresh child. Each result's
     * wall time is its share of the build (the build's wall time over the batch) plus the wait for its reply.
     */
    List<MeasureResult> measureBatch(List<LongFunction<String>> requests, int threads, double timeoutSeconds) {
        MeasureResult[] out = new MeasureResult[requests.size()];
        List<Integer> all = new ArrayList<>();
        for (int i = 0; i < requests.size(); i++) all.add(i);
        batch(requests, all, out, threads, timeoutSeconds);
        return List.of(out);
    }

    private void batch(
            List<LongFunction<String>> requests, List<Integer> which, MeasureResult[] out, int threads, double limit) {
        if (which.size() < 2 || threads < 2) {
            for (int i : which) out[i] = timed(requests.get(i), limit);
            return;
        }
        long firstId = nextId;
        nextId += which.size();
        List<String> lines = new ArrayList<>();
        for (int k = 0; k < which.size(); k++)
            lines.add(requests.get(which.get(k)).apply(firstId + k));
        String line = WorkerProtocol.batchRequest(lines, threads);
        long t0 = System.nanoTime();
        if (worker == null || !worker.isAlive()) start();
        WorkerProcess w = worker;
        w.send(line);
        double[] compileSeconds = new double[which.size()];
        boolean[] done = new boolean[which.size()];
        int built = 0;
        while (built < which.size()) {
            long t2 = System.nanoTime();
            WorkerProcess.Answer a = w.await(limit);
            if (a instanceof WorkerProcess.Answer.Replied r && r.reply().has("compiled")) {
                long k = r.reply().path("compiled").asLong(-1) - firstId;
                if (k >= 0 && k < which.size() && !done[(int) k]) {
                    compileSeconds[(int) k] = r.reply().path("compile_s").asDouble();
                    done[(int) k] = true;
                    built++;
                    continue;
                }
            }
            discard(w);
            if (a instanceof WorkerProcess.Answer.TimedOut) {
                // No compile ended within the time-out, so none started in it either: the programs compiling now
                // (the first `threads` unfinished ones, as the child's build pool takes them in order) have each
                // compiled for longer than a program may take. They are the time-outs; the rest go to a fresh child.
                double waited = (System.nanoTime() - t2) / 1e9;
                List<Integer> rest = new ArrayList<>();
                int blamed = 0;
                for (int k = 0; k < which.size(); k++) {
                    if (!done[k] && blamed < threads) {
                        blamed++;
                        out[which.get(k)] = MeasureResult.failed(
                                        MeasureError.TIMEOUT,
                                        "still compiling after " + limit
                                                + " s (compiling, checking and timing); the worker was killed",
                                        0,
                                        0)
                                .withWallSeconds(waited);
                    } else {
                        rest.add(which.get(k));
                    }
                }
                batch(requests, rest, out, threads, limit);
                return;
            }
            // died or confused while compiling: measure the batch the serial way, which isolates the program at fault
            for (int i : which) out[i] = timed(requests.get(i), limit);
            return;
        }
        double buildShare = (System.nanoTime() - t0) / 1e9 / which.size();
        for (int k = 0; k < which.size(); k++) {
            int i = which.get(k);
            long id = firstId + k;
            long t1 = System.nanoTime();
            WorkerProcess.Answer a = w.await(Math.max(limit - compileSeconds[k], 0.05 * limit));
            MeasureResult r = result(a, w, id, limit);
            out[i] = r.withWallSeconds(buildShare + (System.nanoTime() - t1) / 1e9);
            if (worker != w) {
                batch(requests, which.subList(k + 1, which.size()), out, threads, limit);
                return;
            }
        }
    }

    private MeasureResult timed(LongFunction<String> request, double timeoutSeconds) {
        long t0 = System.nanoTime();
        MeasureResult r = measure(request, timeoutSeconds);
        return r.withWallSeconds((System.nanoTime() - t0) / 1e9);
    }

    private void start() {
        if (worker != null) discard(worker);
        worker = WorkerProcess.start(command, tempDir, startSeconds);
        starts++;
    }

    private void discard(WorkerProcess w) {
        w.kill();
        if (worker == w) worker = null;
    }

    /** Stops the child: asks it to exit when {@code gently}, else kills it. */
    void stop(boolean gently) {
        if (worker == null) return;
        if (gently) worker.close();
        else worker.kill();
        worker = null;
    }

    @Override
    public void close() {
        stop(true);
    }
}
