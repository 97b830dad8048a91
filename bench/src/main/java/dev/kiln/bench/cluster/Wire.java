package dev.kiln.bench.cluster;

import dev.kiln.autoschedule.measure.MeasureError;
import dev.kiln.autoschedule.measure.MeasureResult;
import org.apache.pekko.actor.typed.ActorRef;

/** The messages between tuners and workers, as records (serialized by {@link MessageSerializer}). */
public final class Wire {
    private Wire() {}

    /**
     * A worker asks a job for a program. {@code worker} is the worker actor (the job watches it while it holds one of
     * its programs); {@code target} is the target it measures on; the answer goes to {@code replyTo}.
     */
    public record RequestWork(
            String workerId, String target, ActorRef<WorkerActor.Command> worker, ActorRef<WorkReply> replyTo)
            implements JobActor.Command, ClusterMessage {}

    /** A job's answer to {@link RequestWork}. */
    public sealed interface WorkReply extends ClusterMessage permits Work, NoWork {}

    /**
     * One program to measure. {@code program} is the request text of {@link
     * dev.kiln.autoschedule.measure.RemoteMeasurement.Program}, empty for a simulated program, which the worker
     * measures by sleeping {@code simulatedSeconds} and answering {@code simulatedCost}.
     */
    public record Work(
            long itemId,
            String workloadKey,
            int workloadBytes,
            String program,
            double timeoutSeconds,
            double simulatedSeconds,
            double simulatedCost,
            ActorRef<JobActor.Command> job)
            implements WorkReply {}

    /** The job has no program for this worker now. */
    public record NoWork(String reason) implements WorkReply {}

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
