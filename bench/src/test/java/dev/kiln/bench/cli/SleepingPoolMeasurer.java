package dev.kiln.bench.cli;

import dev.kiln.autoschedule.SearchTask;
import dev.kiln.autoschedule.measure.MeasureOptions;
import dev.kiln.autoschedule.measure.MeasureResult;
import dev.kiln.autoschedule.measure.Measurer;
import dev.kiln.schedule.Schedule;
import dev.kiln.target.Target;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * An asynchronous measurer for the wrapper tests, like a small cluster: {@code workers} threads each "measure" a
 * program by sleeping {@code sleepMs}; a program's time is drawn from its schedule's text (deterministic). It records
 * the largest batch it was given ({@link #largestBatch}).
 */
public final class SleepingPoolMeasurer implements Measurer {
    private final Target target;
    private final long sleepMs;
    private final ExecutorService pool;
    private final AtomicInteger measured = new AtomicInteger();
    private final AtomicInteger largestBatch = new AtomicInteger();

    public SleepingPoolMeasurer(Target target, int workers, long sleepMs) {
        this.target = target;
        this.sleepMs = sleepMs;
        this.pool = Executors.newFixedThreadPool(workers);
    }

    @Override
    public Target target() {
        return target;
    }

    @Override
    public MeasureOptions options() {
        return MeasureOptions.defaults();
    }

    @Override
    public boolean asynchronous() {
        return true;
    }

    @Override
    public List<MeasureResult> measure(SearchTask task, List<Schedule> schedules) {
        return submit(task, schedules).join();
    }

    @Override
    public CompletableFuture<List<MeasureResult>> submit(SearchTask task, List<Schedule> schedules) {
        largestBatch.accumulateAndGet(schedules.size(), Math::max);
        List<CompletableFuture<MeasureResult>> parts = new ArrayList<>();
        for (Schedule s : schedules) parts.add(CompletableFuture.supplyAsync(() -> one(s), pool));
        return CompletableFuture.allOf(parts.toArray(CompletableFuture[]::new))
                .thenApply(v -> parts.stream().map(CompletableFuture::join).toList());
    }

    private MeasureResult one(Schedule s) {
        try {
            Thread.sleep(sleepMs);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        measured.incrementAndGet();
        double cost = 1e-4 * (1 + Math.floorMod(s.toString().hashCode(), 1000) / 100.0);
        return MeasureResult.ok(new double[] {cost}, 0, sleepMs / 1e3);
    }

    /** The largest batch submitted. */
    public int largestBatch() {
        return largestBatch.get();
    }

    /** Programs measured. */
    public int measured() {
        return measured.get();
    }

    @Override
    public void close() {
        pool.shutdownNow();
    }
}
