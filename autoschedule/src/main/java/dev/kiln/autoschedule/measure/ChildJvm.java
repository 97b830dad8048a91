package dev.kiln.autoschedule.measure;

import java.nio.file.Path;
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
        WorkerProcess.Answer a = w.request(line, timeoutSeconds);
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
