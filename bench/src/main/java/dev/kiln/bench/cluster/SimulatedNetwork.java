package dev.kiln.bench.cluster;

import dev.kiln.autoschedule.measure.MeasureResult;
import dev.kiln.autoschedule.scheduler.RoundOutcome;
import dev.kiln.autoschedule.scheduler.SchedulableTask;
import dev.kiln.autoschedule.scheduler.SchedulerTrace;
import dev.kiln.autoschedule.scheduler.StartedRound;
import dev.kiln.autoschedule.scheduler.TaskScheduler;
import dev.kiln.autoschedule.scheduler.TaskSchedulerOptions;
import dev.kiln.ir.KilnException;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

/**
 * A network tune on the cluster without compiling anything ({@code cluster-bench --tasks}): the real task scheduler
 * ({@link TaskScheduler#schedule}, gradient strategy, with or without {@code overlapRounds}) over {@code tasks}
 * simulated tasks. A round of a task optionally spends {@code searchMs} of tuner time (the search for its programs),
 * then sends its programs to the cluster's simulated workers, which sleep each program's time (taken in turn from
 * the bench's times); each program gets a seeded random cost around the task's base latency, so the gradient has
 * something to work on. The row's bound is that of round-by-round scheduling: each round's programs, in the order
 * the rounds started, given to the first free worker, the next round starting when the last one is done.
 */
final class SimulatedNetwork {
    private final ClusterJob job;
    private final double[] times;
    private final double searchMs;
    private final List<double[]> rounds = new ArrayList<>();
    private int next;
    private double used;

    private SimulatedNetwork(ClusterJob job, double[] times, double searchMs) {
        this.job = job;
        this.times = times;
        this.searchMs = searchMs;
    }

    /** Tunes {@code taskCount} simulated tasks for {@code times.length} trials, rounds of {@code batch}. */
    static ScaleBench.Row run(
            ClusterJob job,
            int workers,
            double[] times,
            int batch,
            int taskCount,
            boolean overlap,
            double searchMs,
            long seed) {
        if (taskCount < 1) throw new KilnException("--tasks must be at least 1, got " + taskCount);
        SimulatedNetwork net = new SimulatedNetwork(job, times, searchMs);
        List<SimulatedTask> tasks = new ArrayList<>();
        for (int i = 0; i < taskCount; i++) tasks.add(net.new SimulatedTask(i, seed));
        TaskSchedulerOptions o = TaskSchedulerOptions.builder()
                .trials(times.length)
                .measuresPerRound(batch)
                .seed(seed)
                .overlapRounds(overlap)
                .build();
        var os = (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
        long cpu0 = os.getProcessCpuTime();
        long t0 = System.nanoTime();
        SchedulerTrace trace = TaskScheduler.schedule(tasks, o);
        double seconds = (System.nanoTime() - t0) / 1e9;
        double cpu = (os.getProcessCpuTime() - cpu0) / 1e9;
        if (trace.trials() != times.length) {
            throw new KilnException("the simulated network measured " + trace.trials() + " of " + times.length
                    + " trials (" + trace.stop() + ")");
        }
        double bound = 0;
        for (double[] r : net.rounds) bound += ScaleBench.greedyMakespan(r, workers);
        return new ScaleBench.Row(workers, trace.trials(), seconds, net.used / workers, bound, cpu);
    }

    /** One simulated task: weight 1 to 3, a base latency of 1 to 10 ms, costs 0.5 to 1.5 times that. */
    private final class SimulatedTask implements SchedulableTask {
        private final int index;
        private final double base;
        private final SplittableRandom rnd;
        private double best = Double.POSITIVE_INFINITY;

        SimulatedTask(int index, long seed) {
            this.index = index;
            this.rnd = new SplittableRandom(seed * 31 + index);
            this.base = 1e-3 * (1 + rnd.nextInt(10));
        }

        @Override
        public String name() {
            return "simulated task " + index;
        }

        @Override
        public double weight() {
            return 1 + index % 3;
        }

        @Override
        public long flops() {
            return (long) (base * 1e11);
        }

        @Override
        public String tag() {
            return "";
        }

        @Override
        public RoundOutcome runRound(int n) {
            return startRound(n).finish();
        }

        @Override
        public StartedRound startRound(int n) {
            if (searchMs > 0) ClusterNode.sleep(Math.round(searchMs));
            int k = Math.min(n, times.length - next);
            if (k <= 0) return StartedRound.done(new RoundOutcome(0, 0));
            double[] round = Arrays.copyOfRange(times, next, next + k);
            next += k;
            rounds.add(round);
            List<WorkItem> items = new ArrayList<>();
            for (double t : round) {
                used += t;
                items.add(WorkItem.simulated(t, base * (0.5 + rnd.nextDouble())));
            }
            CompletableFuture<List<MeasureResult>> f = job.submit(items, Map.of());
            return new StartedRound() {
                @Override
                public CompletableFuture<?> measured() {
                    return f;
                }

                @Override
                public RoundOutcome finish() {
                    List<MeasureResult> rs;
                    try {
                        rs = f.join();
                    } catch (CompletionException e) {
                        if (e.getCause() instanceof KilnException x) throw x;
                        throw new KilnException("simulated round of task " + index + " failed: " + e.getCause());
                    }
                    for (MeasureResult r : rs) {
                        if (!r.ok()) throw new KilnException("a simulated measurement failed: " + r.errorMessage());
                        best = Math.min(best, r.cost());
                    }
                    return new RoundOutcome(rs.size(), 0);
                }
            };
        }

        @Override
        public double bestLatency() {
            return best;
        }
    }
}
