package dev.kiln.autoschedule.scheduler;

import dev.kiln.autoschedule.SearchTask;
import dev.kiln.autoschedule.measure.MeasureOptions;
import dev.kiln.autoschedule.measure.MeasureResult;
import dev.kiln.autoschedule.measure.Measurer;
import dev.kiln.autoschedule.search.FakeMeasurer;
import dev.kiln.ir.KilnException;
import dev.kiln.schedule.Schedule;
import dev.kiln.target.Target;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * An asynchronous measurer for scheduler tests, like a cluster: {@code workers} threads take the programs of all
 * submitted batches from one queue, in order, and each "measures" a program by sleeping {@code sleepMs} and asking a
 * {@link FakeMeasurer} for its (deterministic) time. It sums the workers' busy time, so that a test can compare the
 * workers' idle time with and without overlapping rounds, and counts the batches that were queued while another
 * batch still had programs measuring. Programs of workload {@code failing} complete their batch exceptionally.
 */
final class PoolMeasurer implements Measurer {
    private record Job(SearchTask task, Schedule schedule, Batch batch, int index) {}

    private static final class Batch {
        final MeasureResult[] out;
        final AtomicInteger left;
        final CompletableFuture<List<MeasureResult>> done = new CompletableFuture<>();

        Batch(int n) {
            out = new MeasureResult[n];
            left = new AtomicInteger(n);
        }
    }

    private final FakeMeasurer fake;
    private final long sleepMs;
    private final String failing;
    private final LinkedBlockingQueue<Job> queue = new LinkedBlockingQueue<>();
    private final List<Thread> threads = new ArrayList<>();
    private final AtomicLong busyNanos = new AtomicLong();
    private final int workers;
    private int busy;
    private long lastChange;
    private long partialIdleNanos;
    private final AtomicInteger measuring = new AtomicInteger();
    private final AtomicInteger overlapped = new AtomicInteger();
    private final AtomicInteger submitted = new AtomicInteger();
    private final AtomicInteger unfinished = new AtomicInteger();

    PoolMeasurer(Target target, int workers, long sleepMs, String failing) {
        this.fake = new FakeMeasurer(target);
        this.sleepMs = sleepMs;
        this.failing = failing;
        this.workers = workers;
        for (int w = 0; w < workers; w++) {
            Thread t = Thread.ofPlatform().daemon().name("pool-worker-" + w).start(this::work);
            threads.add(t);
        }
    }

    private void work() {
        try {
            while (true) {
                Job j = queue.take();
                measuring.incrementAndGet();
                change(1);
                long t0 = System.nanoTime();
                MeasureResult r = null;
                RuntimeException error = null;
                try {
                    Thread.sleep(sleepMs);
                    if (j.task().workloadKey().equals(failing))
                        throw new KilnException("fake worker lost while measuring " + failing);
                    synchronized (fake) {
                        r = fake.measure(j.task(), List.of(j.schedule())).getFirst();
                    }
                } catch (RuntimeException e) {
                    error = e;
                } finally {
                    busyNanos.addAndGet(System.nanoTime() - t0);
                    measuring.decrementAndGet();
                    change(-1);
                }
                Batch b = j.batch();
                if (error != null) b.done.completeExceptionally(error);
                else b.out[j.index()] = r;
                if (b.left.decrementAndGet() == 0) {
                    unfinished.decrementAndGet();
                    b.done.complete(List.of(b.out));
                }
            }
        } catch (InterruptedException e) {
            // closed
        }
    }

    @Override
    public Target target() {
        return fake.target();
    }

    @Override
    public MeasureOptions options() {
        return fake.options();
    }

    @Override
    public boolean asynchronous() {
        return true;
    }

    @Override
    public CompletableFuture<List<MeasureResult>> submit(SearchTask task, List<Schedule> schedules) {
        Batch b = new Batch(schedules.size());
        submitted.incrementAndGet();
        if (unfinished.getAndIncrement() > 0) overlapped.incrementAndGet();
        for (int i = 0; i < schedules.size(); i++) queue.add(new Job(task, schedules.get(i), b, i));
        return b.done;
    }

    @Override
    public List<MeasureResult> measure(SearchTask task, List<Schedule> schedules) {
        return submit(task, schedules).join();
    }

    /** Worker time spent measuring so far, in seconds. */
    double busySeconds() {
        return busyNanos.get() / 1e9;
    }

    /** A worker starts ({@code +1}) or ends ({@code -1}) a program: integrates the idle workers while some are busy. */
    private synchronized void change(int delta) {
        long now = System.nanoTime();
        if (busy > 0) partialIdleNanos += (workers - busy) * (now - lastChange);
        lastChange = now;
        busy += delta;
    }

    /**
     * Worker time spent idle while another worker measured, in seconds: the tails of rounds (and a tuner too slow to
     * queue the next round), not the time every worker waits for the tuner.
     */
    synchronized double partialIdleSeconds() {
        return partialIdleNanos / 1e9;
    }

    /** Batches submitted while an earlier batch was still unfinished. */
    int overlapped() {
        return overlapped.get();
    }

    int submitted() {
        return submitted.get();
    }

    /** Every program measured, as its steps' JSON text. */
    List<String> measured() {
        synchronized (fake) {
            return fake.measured();
        }
    }

    @Override
    public void close() {
        threads.forEach(Thread::interrupt);
    }
}
