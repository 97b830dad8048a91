package dev.kiln.bench.cluster;

import dev.kiln.autoschedule.measure.MeasureError;
import dev.kiln.autoschedule.measure.MeasureResult;
import org.apache.pekko.actor.typed.ActorRef;

/** The messages between tuners and workers, as records (serialized by {@link MessageSerializer}). */
public final class Wire {
    private Wire() {}

    /**
     * A worker asks a job for a program. {@code worker} is the worker actor (the answer goes to it, and the job watches
     * it while it holds programs of the job); {@code target} is the target it measures on; {@code seq} numbers the
     * worker's requests (the answer carries it back). {@code ahead}: the worker is measuring and asks for the program
     * it will measure next, so that it never waits for a round trip between two programs; the job grants it only while
     * it has at least as many programs waiting as it knows workers (a program held ahead near the end of a batch would
     * wait behind another while a worker idles).
     */
    public record RequestWork(
            String workerId, String target, ActorRef<WorkerActor.Command> worker, long seq, boolean ahead)
            implements JobActor.Command, ClusterMessage {}

    /** A job's answer to {@link RequestWork}: the request's {@code seq} and the job that answers. */
    public sealed interface WorkReply extends WorkerActor.Command, ClusterMessage permits Work, NoWork {
        long seq();

        ActorRef<JobActor.Command> job();
    }

    /**
     * One program to measure. {@code program} is the request text of {@link
     * dev.kiln.autoschedule.measure.RemoteMeasurement.Program}, empty for a simulated program, which the worker
     * measures by sleeping {@code simulatedSeconds} and answering {@code simulatedCost}.
     */
    public record Work(
            long seq,
            long itemId,
            String workloadKey,
            int workloadBytes,
            String program,
            double timeoutSeconds,
            double simulatedSeconds,
            double simulatedCost,
            ActorRef<JobActor.Command> job)
            implements WorkReply {}

    /** The job has no program for this worker now (for an {@code ahead} request: not ahead of time). */
    public record NoWork(long seq, ActorRef<JobActor.Command> job, String reason) implements WorkReply {}

    /** A measured program, from the worker that measured it. */
    public record Result(long itemId, String workerId, ActorRef<WorkerActor.Command> worker, Outcome outcome)
            implements JobActor.Command, ClusterMessage {}

    /** A worker asks for a piece of a workload it has not got yet (workloads can be tens of MiB). */
    public record FetchWorkload(String key, int offset, ActorRef<WorkloadChunk> replyTo)
            implements JobActor.Command, ClusterMessage {}

    /** A piece of a workload, or an error message (then {@code data} is empty). */
    public record WorkloadChunk(String key, int offset, byte[] data, int total, String error)
            implements ClusterMessage {}

    /** A job tells the workers of its target it has programs waiting. */
    public record WorkAvailable(ActorRef<JobActor.Command> job) implements WorkerActor.Command, ClusterMessage {}

    /** A {@link MeasureResult} on the wire. */
    public record Outcome(double[] costs, String error, String message, double compileSeconds, double wallSeconds) {
        public static Outcome of(MeasureResult r) {
            return new Outcome(
                    r.costsSeconds(), r.error().name(), r.errorMessage(), r.compileSeconds(), r.wallSeconds());
        }

        public MeasureResult toResult() {
            MeasureError e = MeasureError.valueOf(error);
            return e == MeasureError.NONE
                    ? MeasureResult.ok(costs, compileSeconds, wallSeconds)
                    : MeasureResult.failed(e, message, compileSeconds, wallSeconds);
        }
    }
}
