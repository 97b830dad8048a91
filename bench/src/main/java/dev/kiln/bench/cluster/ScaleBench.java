package dev.kiln.bench.cluster;

import dev.kiln.autoschedule.log.LogRecord;
import dev.kiln.autoschedule.log.TuningLog;
import dev.kiln.autoschedule.measure.MeasureResult;
import dev.kiln.ir.KilnException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code ./kiln cluster-bench}: how measurement scales with the number of workers, without the hardware. Simulated
 * workers ({@code worker --simulate}, local JVMs on loopback) measure a program by sleeping its recorded time (the
 * wall times of a tuning log's records, or a seeded log-normal spread around {@code --mean-ms}); the tuner submits
 * the programs in batches of {@code --batch} as a tuning run does, and waits for each batch; one batch per worker
 * count warms the JVMs up untimed. For 1, 2, 4 and 8
 * workers it prints the throughput in trials per second, the efficiency against the ideal (the summed sleep divided
 * by the workers, against the time taken), the bound that batches set (a dispatcher without overhead, giving each
 * program of a batch in turn to the first free worker, still leaves workers idle at the end of each batch), the
 * dispatch overhead per trial (worker time lost beyond that bound: round trips between programs, the start of each
 * batch) and the tuner's CPU time per trial. With {@code --tasks} it simulates a network tune instead: the task
 * scheduler over that many simulated tasks, rounds overlapping unless {@code --no-overlap} ({@link SimulatedNetwork}).
 */
@Command(
        name = "bench",
        mixinStandardHelpOptions = true,
        description = "Scaling of cluster measurement with "
                + "simulated workers (sleeping a program's recorded time) on 1, 2, 4 and 8 local workers.")
final class ScaleBench implements Callable<Integer> {
    @Option(names = "--workers", split = ",", description = "worker counts (default: ${DEFAULT-VALUE})")
    List<Integer> counts = List.of(1, 2, 4, 8);

    @Option(names = "--trials", description = "programs measured per worker count (default: ${DEFAULT-VALUE})")
    int trials = 256;

    @Option(names = "--batch", description = "programs per batch, as a tuning round (default: ${DEFAULT-VALUE})")
    int batch = 64;

    @Option(names = "--mean-ms", description = "mean simulated measurement time (default: ${DEFAULT-VALUE})")
    double meanMs = 200;

    @Option(names = "--log", description = "take the simulated times from this tuning log's wall times instead")
    Path log;

    @Option(names = "--seed", description = "seed of the simulated times (default: ${DEFAULT-VALUE})")
    long seed = 1;

    @Option(
            names = "--worker-queue",
            description = "programs a worker holds at once (worker --queue): 2 asks for the next one while "
                    + "measuring, 1 only when idle (default: ${DEFAULT-VALUE})")
    int workerQueue = 2;

    @Option(
            names = "--unreachable-after-ms",
            description = "how long a silent node is given, on the tuner and the workers; raise it on a loaded "
                    + "machine, where the tuner's node is otherwise removed from the cluster (default: "
                    + "${DEFAULT-VALUE})")
    long unreachableMs = 5000;

    @Option(
            names = "--tasks",
            description = "simulate a network tune instead of plain batches: the task scheduler (gradient strategy) "
                    + "over this many simulated tasks, rounds of --batch (0: plain batches; default: ${DEFAULT-VALUE})")
    int tasks;

    @Option(
            names = "--overlap",
            negatable = true,
            defaultValue = "true",
            fallbackValue = "true",
            description = "with --tasks: the scheduler's overlapRounds (the next task's round is queued while a "
                    + "round measures); --no-overlap runs round by round (default: ${DEFAULT-VALUE})")
    boolean overlap = true;

    @Option(
            names = "--search-ms",
            description = "with --tasks: tuner time a round spends choosing its programs before it sends them "
                    + "(simulated search; default: ${DEFAULT-VALUE})")
    double searchMs;

    /** One row of the table. */
    record Row(
            int workers, int trials, double seconds, double idealSeconds, double boundSeconds, double tunerCpuSeconds) {
        double throughput() {
            return trials / seconds;
        }

        double efficiency() {
            return idealSeconds / seconds;
        }

        /** The efficiency of a dispatcher without overhead on the same batches. */
        double bound() {
            return idealSeconds / boundSeconds;
        }

        /** Worker time lost per trial beyond the batches' own idle tails, in ms. */
        double dispatchMsPerTrial() {
            return (seconds - boundSeconds) * workers / trials * 1e3;
        }

        double tunerCpuMsPerTrial() {
            return tunerCpuSeconds / trials * 1e3;
        }
    }

    @Override
    public Integer call() throws Exception {
        double[] times = times();
        Path dir = Files.createTempDirectory("kiln-cluster-bench-");
        String password = "bench-" + Long.toHexString(new SplittableRandom().nextLong());
        Path ks = ClusterKeys.generate(dir.resolve("bench.p12"), password, "kiln-bench");
        int port = LocalWorkers.freePort();
        ClusterSettings settings = ClusterSettings.of("127.0.0.1", port, List.of(), ks, password)
                .withUnreachableAfter(Duration.ofMillis(unreachableMs));
        System.out.printf(
                Locale.ROOT,
                "simulated programs: %d per worker count, mean %.0f ms, batches of %d, worker queue %d%n",
                trials,
                mean(times) * 1e3,
                batch,
                workerQueue);
        if (tasks > 0) {
            System.out.printf(
                    Locale.ROOT,
                    "simulated network tune: %d tasks, %s, search %.0f ms per round; the bound is round by round's%n",
                    tasks,
                    overlap ? "overlapping rounds" : "round by round",
                    searchMs);
        }
        System.out.println(
                "workers  trials/s  ideal/s  efficiency  batch bound  dispatch ms/trial  tuner CPU ms/trial");
        List<String> workerArgs = List.of(
                "--simulate",
                "--queue",
                Integer.toString(workerQueue),
                "--unreachable-after-ms",
                Long.toString(unreachableMs));
        try (ClusterNode node = ClusterNode.start(settings, List.of("tuner"));
                LocalWorkers workers = new LocalWorkers(ks, password, dir);
                ClusterJob job = new ClusterJob(node, "simulated", Duration.ofSeconds(120))) {
            node.awaitUp(Duration.ofSeconds(30));
            int have = 0;
            for (int n : counts) {
                if (n > have) workers.start(n - have, node.address(), 0, workerArgs, Duration.ofMinutes(5));
                have = Math.max(have, n);
                job.awaitWorkers(have, Duration.ofMinutes(5));
                if (n < have) throw new KilnException("--workers must be increasing, got " + counts);
                run(job, n, java.util.Arrays.copyOf(times, Math.min(times.length, batch)), batch); // warm-up, untimed
                Row r = tasks > 0
                        ? SimulatedNetwork.run(job, n, times, batch, tasks, overlap, searchMs, seed)
                        : run(job, n, times, batch);
                System.out.printf(
                        Locale.ROOT,
                        "%7d  %8.2f  %7.2f  %9.1f%%  %10.1f%%  %17.2f  %18.3f%n",
                        r.workers(),
                        r.throughput(),
                        r.trials() / r.idealSeconds(),
                        100 * r.efficiency(),
                        100 * r.bound(),
                        r.dispatchMsPerTrial(),
                        r.tunerCpuMsPerTrial());
            }
        }
        return 0;
    }

    static Row run(ClusterJob job, int workers, double[] times, int batchSize) {
        var os = (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
        int total = times.length;
        double sum = 0;
        for (double t : times) sum += t;
        double bound = 0;
        for (int from = 0; from < total; from += batchSize)
            bound += greedyMakespan(
                    java.util.Arrays.copyOfRange(times, from, Math.min(total, from + batchSize)), workers);
        long cpu0 = os.getProcessCpuTime();
        long t0 = System.nanoTime();
        int done = 0;
        while (done < total) {
            List<WorkItem> items = new ArrayList<>();
            for (int i = done; i < Math.min(total, done + batchSize); i++)
                items.add(WorkItem.simulated(times[i], 1e-3));
            List<MeasureResult> rs = job.run(items, Map.of());
            for (MeasureResult r : rs) {
                if (!r.ok()) throw new KilnException("a simulated measurement failed: " + r.errorMessage());
            }
            done += items.size();
        }
        double seconds = (System.nanoTime() - t0) / 1e9;
        double cpu = (os.getProcessCpuTime() - cpu0) / 1e9;
        return new Row(workers, total, seconds, sum / workers, bound, cpu);
    }

    /** The time a batch takes when each program goes, in order, to the first free worker, with no overhead. */
    static double greedyMakespan(double[] batch, int workers) {
        java.util.PriorityQueue<Double> free = new java.util.PriorityQueue<>();
        for (int w = 0; w < workers; w++) free.add(0.0);
        double end = 0;
        for (double t : batch) {
            double f = free.poll() + t;
            end = Math.max(end, f);
            free.add(f);
        }
        return end;
    }

    private double[] times() {
        double[] out = new double[trials];
        if (log != null) {
            List<Double> walls = new ArrayList<>();
            try (TuningLog l = TuningLog.open(log)) {
                for (LogRecord r : l.records()) if (r.wallSeconds() > 0) walls.add(r.wallSeconds());
            }
            if (walls.isEmpty()) throw new KilnException("tuning log " + log + " has no record with a wall time");
            for (int i = 0; i < trials; i++) out[i] = walls.get(i % walls.size());
            return out;
        }
        SplittableRandom rnd = new SplittableRandom(seed);
        double sigma = 0.5;
        double mu = Math.log(meanMs / 1e3) - sigma * sigma / 2;
        for (int i = 0; i < trials; i++) {
            double g = Math.sqrt(-2 * Math.log(1 - rnd.nextDouble())) * Math.cos(2 * Math.PI * rnd.nextDouble());
            out[i] = Math.exp(mu + sigma * g);
        }
        return out;
    }

    private static double mean(double[] a) {
        double s = 0;
        for (double x : a) s += x;
        return s / a.length;
    }
}
