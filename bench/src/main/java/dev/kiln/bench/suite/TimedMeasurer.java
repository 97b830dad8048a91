package dev.kiln.bench.suite;

import dev.kiln.autoschedule.SearchTask;
import dev.kiln.autoschedule.measure.MeasureOptions;
import dev.kiln.autoschedule.measure.MeasureResult;
import dev.kiln.autoschedule.measure.Measurer;
import dev.kiln.schedule.Schedule;
import dev.kiln.target.Target;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * A {@link Measurer} that passes every batch on to another and adds up the wall time spent in it
 * (lowering, compiling, checking and timing the programs in the measurer's child JVM), so the
 * suite can tell the tuner's own time (sampling, evolution, cost model) from measurement.
 */
final class TimedMeasurer implements Measurer {
    private final Measurer inner;
    private long nanos;
    private int programs;

    TimedMeasurer(Measurer inner) {
        this.inner = inner;
    }

    /** Seconds spent inside {@link #measure} so far. */
    synchronized double seconds() {
        return nanos / 1e9;
    }

    /** Programs measured so far. */
    synchronized int programs() {
        return programs;
    }

    @Override
    public Target target() {
        return inner.target();
    }

    @Override
    public MeasureOptions options() {
        return inner.options();
    }

    @Override
    public void prepare(List<SearchTask> tasks, int threads) {
        inner.prepare(tasks, threads);
    }

    @Override
    public List<MeasureResult> measure(SearchTask task, List<Schedule> schedules) {
        long s = System.nanoTime();
        try {
            return inner.measure(task, schedules);
        } finally {
            add(System.nanoTime() - s, schedules.size());
        }
    }

    /** The real measurer's, so that a measurer that compiles a batch in parallel gets whole batches. */
    @Override
    public int batchSize() {
        return inner.batchSize();
    }

    /** The real measurer's: a wrapped asynchronous measurer keeps its overlapping rounds. */
    @Override
    public boolean asynchronous() {
        return inner.asynchronous();
    }

    /** Passes the batch on; its wall time (submit to completion) is added when it completes. */
    @Override
    public CompletableFuture<List<MeasureResult>> submit(SearchTask task, List<Schedule> schedules) {
        long s = System.nanoTime();
        return inner.submit(task, schedules).whenComplete((rs, e) -> add(System.nanoTime() - s, schedules.size()));
    }

    private synchronized void add(long n, int count) {
        nanos += n;
        programs += count;
    }

    @Override
    public void close() {
        inner.close();
    }
}
