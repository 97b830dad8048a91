package dev.kiln.bench.cluster;

import dev.kiln.autoschedule.measure.MeasureResult;
import dev.kiln.ir.KilnException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;
import org.apache.pekko.actor.CoordinatedShutdown;
import org.apache.pekko.actor.typed.ActorRef;

/**
 * A tuning job on a cluster node: submits batches of {@link WorkItem}s to the workers of one target and waits for
 * their results ({@link JobActor} does the dispatching). Several jobs, in one tuner process or in several, share the
 * workers of a target: each worker serves the jobs with work in turn.
 *
 * <p>A job made by {@link #rejoining} owns its node: when the node is removed from the cluster (silent past its
 * failure detector's patience on an overloaded machine, a network cut) and stops, the job starts a fresh node with
 * the same settings, which joins the cluster again, and sends the batches that were waiting there again (up to
 * {@link #MAX_REJOINS} times per batch). The results of a batch still come back once per item, in order.
 */
public final class ClusterJob implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(ClusterJob.class.getName());
    /** How often a batch is sent again after the job's node stopped. */
    public static final int MAX_REJOINS = 3;
    /**
     * How long a node that left the cluster gets to stop by itself before the job stops it: a downed node that stays
     * up quarantines the others after some seconds, and then the seed side downs itself.
     */
    static final int SELF_SHUTDOWN_WAIT_S = 5;

    private static final long WATCH_PERIOD_MS = 500;
    /** Checks, for every waiting batch of a rejoining job, whether its node has left the cluster. */
    private static final ScheduledExecutorService WATCH = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "kiln-cluster-job-watch");
        t.setDaemon(true);
        return t;
    });

    private final String target;
    private final Duration noWorkerTimeout;
    /** Starts a fresh node for a rejoining job; null for a job on a node it does not own. */
    private final Supplier<ClusterNode> fresh;

    private volatile ClusterNode node;
    private volatile ActorRef<JobActor.Command> actor;
    private volatile boolean closed;
    private int rejoins;

    public ClusterJob(ClusterNode node, String target, Duration noWorkerTimeout) {
        this(node, target, noWorkerTimeout, null);
    }

    private ClusterJob(ClusterNode node, String target, Duration noWorkerTimeout, Supplier<ClusterNode> fresh) {
        this.node = node;
        this.target = target;
        this.noWorkerTimeout = noWorkerTimeout;
        this.fresh = fresh;
        this.actor = node.spawn(JobActor.create(target, noWorkerTimeout), "job-" + UUID.randomUUID());
    }

    /**
     * A job on a node of its own, started with {@code settings} and {@code roles}, that rejoins the cluster with a
     * fresh node when its node is removed (see the class comment); {@link #close} stops the node.
     */
    public static ClusterJob rejoining(
            ClusterSettings settings, List<String> roles, String target, Duration noWorkerTimeout) {
        List<String> r = List.copyOf(roles);
        return rejoining(() -> ClusterNode.start(settings, r), target, noWorkerTimeout);
    }

    /** A rejoining job whose nodes {@code fresh} starts (tests start nodes with settings of their own). */
    static ClusterJob rejoining(Supplier<ClusterNode> fresh, String target, Duration noWorkerTimeout) {
        return new ClusterJob(fresh.get(), target, noWorkerTimeout, fresh);
    }

    public String target() {
        return target;
    }

    /** The job's node now (a rejoining job's changes when it rejoins). */
    public ClusterNode node() {
        return node;
    }

    /** How often this job has started a fresh node after its node stopped. */
    public synchronized int rejoins() {
        return rejoins;
    }

    /** Measures {@code items} on the cluster; one result per item, in order. */
    public List<MeasureResult> run(List<WorkItem> items, Map<String, byte[]> workloads) {
        CompletableFuture<List<MeasureResult>> done = submit(items, workloads);
        try {
            return done.get();
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
     * item, in order, or fails with a {@link KilnException} (no worker of the target for too long, the job closed,
     * the tuner's node stopped and, for a rejoining job, {@link #MAX_REJOINS} fresh nodes did not help). Batches are
     * handed out first come, first served, so a batch submitted while the last programs of the one before measure
     * keeps the workers busy.
     */
    public CompletableFuture<List<MeasureResult>> submit(List<WorkItem> items, Map<String, byte[]> workloads) {
        CompletableFuture<List<MeasureResult>> out = new CompletableFuture<>();
        send(List.copyOf(items), Map.copyOf(workloads), out, 0);
        return out;
    }

    private void send(
            List<WorkItem> items,
            Map<String, byte[]> workloads,
            CompletableFuture<List<MeasureResult>> out,
            int tries) {
        ClusterNode n;
        ActorRef<JobActor.Command> a;
        try {
            synchronized (this) {
                if (closed) throw new KilnException("the cluster job of target '" + target + "' is closed");
                if (fresh != null && stopping(node)) rejoin();
                n = node;
                a = actor;
            }
        } catch (RuntimeException e) {
            out.completeExceptionally(e);
            return;
        }
        CompletableFuture<List<MeasureResult>> done = new CompletableFuture<>();
        a.tell(new JobActor.Submit(items, workloads, done));
        Runnable gone = () -> done.completeExceptionally(
                new KilnException(nodeStopped().getMessage() + "; " + items.size() + " programs were not measured"));
        n.system().getWhenTerminated().thenRun(gone);
        if (fresh != null) {
            // a downed node normally shuts itself down within seconds, but a node that sees itself Down may wait on
            // gossip that never comes (seen on overloaded CI hosts): the batch does not wait for its termination
            ScheduledFuture<?> watch = WATCH.scheduleWithFixedDelay(
                    () -> {
                        if (stopping(n)) gone.run();
                    },
                    WATCH_PERIOD_MS,
                    WATCH_PERIOD_MS,
                    TimeUnit.MILLISECONDS);
            done.whenComplete((r, e) -> watch.cancel(false));
        }
        done.whenComplete((r, e) -> {
            if (e == null) {
                out.complete(r);
            } else if (fresh != null && !closed && tries < MAX_REJOINS && stopping(n)) {
                // the node is going (removed from the cluster): send the batch again from a fresh one
                CompletableFuture.runAsync(() -> {
                    awaitTerminated(n);
                    send(items, workloads, out, tries + 1);
                });
            } else {
                out.completeExceptionally(e instanceof java.util.concurrent.CompletionException c ? c.getCause() : e);
            }
        });
    }

    /**
     * Whether {@code n} is leaving for good: its actor system is shutting down or stopped, or the cluster has marked
     * it Down, Exiting or Removed (it will not serve the job again even if its shutdown is slow to start).
     */
    private static boolean stopping(ClusterNode n) {
        return n.system().getWhenTerminated().toCompletableFuture().isDone()
                || CoordinatedShutdown.get(n.system()).getShutdownReason().isPresent()
                || n.isGone();
    }

    /**
     * Waits for {@code n} to stop by itself for {@link #SELF_SHUTDOWN_WAIT_S} seconds, then stops it: a downed node
     * whose own shutdown never starts must not hold the job (its fresh node takes the same role).
     */
    private static void awaitTerminated(ClusterNode n) {
        var terminated = n.system().getWhenTerminated().toCompletableFuture();
        try {
            terminated.get(SELF_SHUTDOWN_WAIT_S, TimeUnit.SECONDS);
            return;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return;
        } catch (ExecutionException | TimeoutException e) {
            LOG.log(
                    System.Logger.Level.WARNING,
                    "the tuner's node " + n.address() + " did not stop within " + SELF_SHUTDOWN_WAIT_S
                            + " s of leaving the cluster; stopping it");
        }
        long t0 = System.nanoTime();
        n.system().terminate();
        try {
            terminated.get(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (ExecutionException | TimeoutException e) {
            // a fresh node is started anyway; its coordinated shutdown's phases may take some tens of seconds more
            LOG.log(
                    System.Logger.Level.WARNING,
                    "the tuner's node " + n.address() + " has not stopped within 10 s of being stopped (shutdown "
                            + "reason "
                            + CoordinatedShutdown.get(n.system())
                                    .getShutdownReason()
                                    .orElse(null)
                            + "); starting a fresh node beside it");
            terminated.whenComplete((r, x) -> LOG.log(
                    System.Logger.Level.INFO,
                    String.format(
                            "the tuner's node %s stopped %.1f s after being stopped",
                            n.address(), (System.nanoTime() - t0) / 1e9)));
        }
    }

    /** Starts a fresh node and a new dispatcher on it (the caller holds the lock). */
    private void rejoin() {
        ClusterNode old = node;
        awaitTerminated(old);
        LOG.log(
                System.Logger.Level.WARNING,
                "cluster job of target '" + target + "': the tuner's node " + old.address()
                        + " was removed from the cluster; joining again with a fresh node");
        node = fresh.get();
        actor = node.spawn(JobActor.create(target, noWorkerTimeout), "job-" + UUID.randomUUID());
        rejoins++;
    }

    /** What the job has seen so far (since its last rejoin). */
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

    /**
     * Stops the job (its waiting batches are abandoned); the node stays, unless the job made it ({@link #rejoining}).
     */
    @Override
    public void close() {
        synchronized (this) {
            if (closed) return;
            closed = true;
        }
        actor.tell(JobActor.Stop.INSTANCE);
        if (fresh != null) node.close();
    }
}
