package dev.kiln.bench.cluster;

import dev.kiln.autoschedule.measure.MeasureResult;
import dev.kiln.ir.KilnException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.pekko.actor.typed.ActorRef;

/**
 * A tuning job on a cluster node: submits batches of {@link WorkItem}s to the workers of one target and waits for
 * their results ({@link JobActor} does the dispatching). Several jobs, in one tuner process or in several, share the
 * workers of a target: each worker serves the jobs with work in turn.
 */
public final class ClusterJob implements AutoCloseable {
    private final ClusterNode node;
    private final String target;
    private final ActorRef<JobActor.Command> actor;

    public ClusterJob(ClusterNode node, String target, Duration noWorkerTimeout) {
        this.node = node;
        this.target = target;
        this.actor = node.spawn(JobActor.create(target, noWorkerTimeout), "job-" + UUID.randomUUID());
    }

    public String target() {
        return target;
    }

    public ClusterNode node() {
        return node;
    }

    /** Measures {@code items} on the cluster; one result per item, in order. */
    public List<MeasureResult> run(List<WorkItem> items, Map<String, byte[]> workloads) {
        CompletableFuture<List<MeasureResult>> done = submit(items, workloads);
        try {
            while (true) {
                try {
                    return done.get(1, TimeUnit.SECONDS);
                } catch (TimeoutException e) {
                    if (node.system().getWhenTerminated().toCompletableFuture().isDone()) {
                        throw new KilnException(
                                nodeStopped().getMessage() + "; " + items.size() + " programs were not measured");
                    }
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new KilnException("interrupted while waiting for the cluster's measurements");
        } catch (ExecutionException e) {
            if (e.getCause() instanceof KilnException k) throw k;
            throw new KilnException("the cluster job failed: " + e.getCause());
        }
    }

    /**
     * Queues {@code items} behind the batches already submitted and returns at once: the future gets one result per
     * item, in order, or fails with a {@link KilnException} (no worker of the target for too long, the job stopped,
     * the tuner's node stopped). Batches are handed out first come, first served, so a batch submitted while the
     * last programs of the one before measure keeps the workers busy.
     */
    public CompletableFuture<List<MeasureResult>> submit(List<WorkItem> items, Map<String, byte[]> workloads) {
        CompletableFuture<List<MeasureResult>> done = new CompletableFuture<>();
        actor.tell(new JobActor.Submit(List.copyOf(items), Map.copyOf(workloads), done));
        node.system()
                .getWhenTerminated()
                .thenRun(() -> done.completeExceptionally(new KilnException(
                        nodeStopped().getMessage() + "; " + items.size() + " programs were not measured")));
        return done;
    }

    /** What the job has seen so far. */
    public JobReport report() {
        CompletableFuture<JobReport> f = new CompletableFuture<>();
        actor.tell(new JobActor.Report(f));
        return get(f);
    }

    /** How many workers of the target the job knows now. */
    public int workers() {
        CompletableFuture<Integer> f = new CompletableFuture<>();
        actor.tell(new JobActor.CountWorkers(f));
        return get(f);
    }

    /** Waits until at least {@code n} workers of the target are known; throws after {@code timeout}. */
    public void awaitWorkers(int n, Duration timeout) {
        long end = System.nanoTime() + timeout.toNanos();
        int have;
        while ((have = workers()) < n) {
            if (System.nanoTime() > end) {
                throw new KilnException("only " + have + " of " + n + " workers of target '" + target
                        + "' joined within " + timeout.toSeconds() + " s");
            }
            ClusterNode.sleep(100);
        }
    }

    private <T> T get(CompletableFuture<T> f) {
        try {
            return f.get(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new KilnException("interrupted");
        } catch (ExecutionException | TimeoutException e) {
            if (node.system().getWhenTerminated().toCompletableFuture().isDone()) throw nodeStopped();
            throw new KilnException("the cluster job did not answer: " + e);
        }
    }

    private static KilnException nodeStopped() {
        return new KilnException("the tuner's cluster node has stopped (removed from the cluster: unreachable for "
                + "too long, as on an overloaded machine, or a network partition left it in the minority)");
    }

    /** Stops the job (its waiting batches are abandoned); the node stays. */
    @Override
    public void close() {
        actor.tell(JobActor.Stop.INSTANCE);
    }
}
