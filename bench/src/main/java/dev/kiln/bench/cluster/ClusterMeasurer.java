package dev.kiln.bench.cluster;

import dev.kiln.autoschedule.SearchTask;
import dev.kiln.autoschedule.measure.MeasureOptions;
import dev.kiln.autoschedule.measure.MeasureResult;
import dev.kiln.autoschedule.measure.Measurer;
import dev.kiln.autoschedule.measure.RemoteMeasurement;
import dev.kiln.autoschedule.tune.TuneOptions;
import dev.kiln.ir.KilnException;
import dev.kiln.schedule.Schedule;
import dev.kiln.target.Target;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

/**
 * A {@link Measurer} that measures on the workers of a Kiln cluster: each schedule is lowered here (a {@link
 * dev.kiln.autoschedule.measure.MeasureError#LOWER} failure never leaves the tuner), each task's workload (seeded
 * inputs and the interpreter's reference outputs) is computed here once, and the programs of a batch are measured in
 * parallel by the workers whose target is this measurer's target, each in its worker's child JVM. The results come
 * back in the batch's order, one per schedule, so the tuning log gets each program once whatever the workers did.
 * Select it with {@link TuneOptions.Builder#measurers} and {@link #factory}.
 */
public final class ClusterMeasurer implements Measurer {
    private final Target target;
    private final MeasureOptions options;
    private final ClusterJob job;
    private final RemoteMeasurement.Preparer preparer;
    private final Map<String, byte[]> workloads = new HashMap<>();
    private boolean closed;

    private ClusterMeasurer(Target target, MeasureOptions options, ClusterJob job) {
        this.target = target;
        this.options = options;
        this.job = job;
        this.preparer = new RemoteMeasurement.Preparer(target, options);
    }

    /** A measurer on {@code node} (shared with other jobs; not closed with the measurer). */
    public static ClusterMeasurer on(
            ClusterNode node, Target target, MeasureOptions options, Duration noWorkerTimeout) {
        return new ClusterMeasurer(target, options, new ClusterJob(node, target.toString(), noWorkerTimeout));
    }

    /**
     * A factory for {@link TuneOptions.Builder#measurers}: each tuning run starts a tuner node with {@code settings},
     * measures on the cluster, and leaves it when the run ends. If that node is removed from the cluster meanwhile
     * (an overloaded tuner machine, a network cut), a fresh one joins again and the waiting batches are sent again
     * ({@link ClusterJob#rejoining}).
     */
    public static TuneOptions.MeasurerFactory factory(ClusterSettings settings, Duration noWorkerTimeout) {
        return (target, options) -> new ClusterMeasurer(
                target, options, ClusterJob.rejoining(settings, List.of("tuner"), target.toString(), noWorkerTimeout));
    }

    @Override
    public Target target() {
        return target;
    }

    @Override
    public MeasureOptions options() {
        return options;
    }

    /** The job's dispatcher report: programs dispatched, re-queued, dropped duplicates, faulty workers. */
    public JobReport report() {
        return job.report();
    }

    /** The job behind this measurer (to wait for workers, say). */
    public ClusterJob job() {
        return job;
    }

    @Override
    public List<MeasureResult> measure(SearchTask task, List<Schedule> schedules) {
        try {
            return submit(task, schedules).join();
        } catch (CompletionException e) {
            if (e.getCause() instanceof KilnException k) throw k;
            throw new KilnException("the cluster job failed: " + e.getCause());
        }
    }

    /** The cluster measures in parallel: {@link #submit} sends the batch and returns. */
    @Override
    public boolean asynchronous() {
        return true;
    }

    /**
     * Lowers the schedules here (a lowering failure is that program's result at once), sends the others to the
     * workers as one batch behind those already queued, and returns; the future gets one result per schedule, in
     * order.
     */
    @Override
    public CompletableFuture<List<MeasureResult>> submit(SearchTask task, List<Schedule> schedules) {
        if (closed) throw new KilnException("this measurer is closed");
        if (schedules.isEmpty()) return CompletableFuture.completedFuture(List.of());
        String key = workloadKey(task);
        Map<String, byte[]> send = new HashMap<>();
        List<WorkItem> items = new ArrayList<>();
        List<Integer> where = new ArrayList<>();
        MeasureResult[] out = new MeasureResult[schedules.size()];
        for (int i = 0; i < schedules.size(); i++) {
            RemoteMeasurement.Prepared p = preparer.prepare(task, schedules.get(i));
            if (!p.ok()) {
                out[i] = p.failure();
                continue;
            }
            if (!workloads.containsKey(key)) workloads.put(key, preparer.workloadBytes(task));
            send.putIfAbsent(key, workloads.get(key));
            items.add(new WorkItem(key, p.program().request(), options.timeoutSeconds(), 0, 0));
            where.add(i);
        }
        if (items.isEmpty()) return CompletableFuture.completedFuture(List.of(out));
        return job.submit(items, send).thenApply(got -> {
            MeasureResult[] all = out.clone();
            for (int k = 0; k < got.size(); k++) all[where.get(k)] = got.get(k);
            return List.of(all);
        });
    }

    /** A short key of the task's workload with this measurer's seed and check, for the workers' caches. */
    private String workloadKey(SearchTask task) {
        String s = task.dag().workloadKey() + "|seed=" + options.seed() + "|check=" + options.checkCorrectness();
        try {
            byte[] d = MessageDigest.getInstance("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(d, 0, 16);
        } catch (NoSuchAlgorithmException e) {
            throw new KilnException("SHA-256 is missing from this JVM");
        }
    }

    @Override
    public void close() {
        if (closed) return;
        closed = true;
        job.close();
        preparer.close();
    }
}
