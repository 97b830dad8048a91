package dev.kiln.bench.cluster;

import static dev.kiln.ir.DType.FLOAT32;
import static org.assertj.core.api.Assertions.assertThat;

import dev.kiln.autoschedule.Candidate;
import dev.kiln.autoschedule.SearchTask;
import dev.kiln.autoschedule.log.LogRecord;
import dev.kiln.autoschedule.log.TuningLog;
import dev.kiln.autoschedule.measure.MeasureOptions;
import dev.kiln.autoschedule.measure.MeasureResult;
import dev.kiln.autoschedule.network.CompiledNetwork;
import dev.kiln.autoschedule.network.Network;
import dev.kiln.autoschedule.network.NetworkTuneOptions;
import dev.kiln.autoschedule.scheduler.SchedulerResult;
import dev.kiln.autoschedule.scheduler.TaskResult;
import dev.kiln.autoschedule.search.RandomSearchPolicy;
import dev.kiln.autoschedule.tune.AutoSchedule;
import dev.kiln.autoschedule.tune.TuneOptions;
import dev.kiln.graph.Graph;
import dev.kiln.graph.GraphBuilder;
import dev.kiln.graph.NodeRunner;
import dev.kiln.graph.ReferenceExecutor;
import dev.kiln.graph.Value;
import dev.kiln.nn.Linalg;
import dev.kiln.runtime.NDArray;
import dev.kiln.schedule.Schedule;
import dev.kiln.target.Target;
import dev.kiln.te.ComputeDAG;
import dev.kiln.te.Te;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * Real measurements on worker JVMs (each measuring in its own child JVM with the LLVM backend), on loopback with
 * mutual TLS: a worker whose checks fail is reported, two tuners share the workers with separate logs, a tuner
 * killed mid-run resumes from its log while the workers carry on, and a small network tuned with the default options
 * overlaps its rounds, logs every trial once in its own task, resumes without measuring twice and matches the
 * reference. The seed is a worker, so the cluster outlives any tuner.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ClusterTuneTest {
    static final ComputeDAG DAG = matmul(16, 12, 10);
    static final MeasureOptions OPTIONS = MeasureOptions.defaults()
            .withRepeats(2)
            .withMinRepeatMs(1)
            .withWarmupMs(1)
            .withTimeoutSeconds(60)
            .withRemeasure(0, 0);

    static ClusterFixture fx;
    static ClusterNode tuner;
    static String seed;
    static LocalWorkers.Worker bad;

    static ComputeDAG matmul(long n, long m, long k) {
        return ComputeDAG.of(Linalg.matmul(Te.placeholder("A", FLOAT32, n, k), Te.placeholder("B", FLOAT32, k, m)));
    }

    static TuneOptions.Builder tuneOptions(Path log, int trials) {
        return TuneOptions.builder()
                .trials(trials)
                .measuresPerRound(2)
                .logFile(log)
                .measureOptions(OPTIONS)
                .policy(RandomSearchPolicy::forTask)
                .progressBar(false);
    }

    @BeforeAll
    static void start() throws Exception {
        fx = new ClusterFixture();
        int port = LocalWorkers.freePort();
        fx.workers.start(1, null, port, ClusterFixture.args(), Duration.ofMinutes(2));
        seed = "127.0.0.1:" + port;
        // the second good worker, the bad one and the tuner join the seed at once (JVM start-up is most of the time)
        CompletableFuture<List<LocalWorkers.Worker>> good = CompletableFuture.supplyAsync(
                () -> fx.workers.start(1, seed, 0, ClusterFixture.args(), Duration.ofMinutes(2)));
        CompletableFuture<List<LocalWorkers.Worker>> corrupt = CompletableFuture.supplyAsync(
                () -> fx.workers.start(1, seed, 0, ClusterFixture.args("--corrupt-references"), Duration.ofMinutes(2)));
        tuner = ClusterNode.start(fx.settings(0, List.of(seed)), List.of("tuner"));
        good.join();
        bad = corrupt.join().getFirst();
        assertThat(tuner.awaitUp(Duration.ofSeconds(60))).isTrue();
    }

    @AfterAll
    static void stop() {
        if (tuner != null) tuner.close();
        if (fx != null) fx.close();
    }

    @Test
    @Order(1)
    void aWorkerWhoseChecksFailIsReportedAndItsProgramsAreMeasuredElsewhere() {
        SearchTask task = SearchTask.of(DAG, Target.cpu());
        try (ClusterMeasurer m = ClusterMeasurer.on(tuner, Target.cpu(), OPTIONS, Duration.ofSeconds(60))) {
            m.job().awaitWorkers(3, Duration.ofSeconds(60));
            for (int round = 0; round < 4 && m.report().quarantined().isEmpty(); round++) {
                List<MeasureResult> rs = m.measure(task, Collections.nCopies(6, Schedule.empty(DAG)));
                assertThat(rs)
                        .hasSize(6)
                        .allSatisfy(r -> assertThat(r.ok()).as(r.errorMessage()).isTrue());
            }
            JobReport r = m.report();
            String badPort = ":" + bad.address().substring(bad.address().lastIndexOf(':') + 1) + "/";
            assertThat(r.quarantined()).singleElement().asString().contains(badPort);
            assertThat(r.faults())
                    .anySatisfy(f -> assertThat(f).contains(badPort).contains("wrong result"));
            assertThat(r.byWorker().keySet()).noneMatch(w -> w.contains(badPort));
        } finally {
            bad.kill();
        }
    }

    @Test
    @Order(2)
    void twoTunersShareTheWorkersAndEachLogHoldsOnlyItsOwnRecords() throws Exception {
        ComputeDAG other = matmul(8, 24, 12);
        Path logA = fx.dir.resolve("a.jsonl");
        Path logB = fx.dir.resolve("b.jsonl");
        List<CompletableFuture<Void>> runs = new ArrayList<>();
        List<ClusterMeasurer> ms = new ArrayList<>();
        for (var job : List.of(new Object[] {DAG, logA}, new Object[] {other, logB})) {
            ClusterMeasurer m = ClusterMeasurer.on(tuner, Target.cpu(), OPTIONS, Duration.ofSeconds(60));
            ms.add(m);
            runs.add(CompletableFuture.runAsync(() -> AutoSchedule.tune(
                            (ComputeDAG) job[0],
                            Target.cpu(),
                            tuneOptions((Path) job[1], 6).measurer(m).build())
                    .close()));
        }
        for (var f : runs) f.get(5, TimeUnit.MINUTES);
        for (int i = 0; i < 2; i++) {
            ComputeDAG dag = i == 0 ? DAG : other;
            try (TuningLog log = TuningLog.open(i == 0 ? logA : logB)) {
                assertThat(log.records()).isNotEmpty().allSatisfy(r -> assertThat(r.workloadKey())
                        .isEqualTo(dag.workloadKey()));
                assertThat(log.records().stream().filter(r -> r.kind().equals(LogRecord.TRIAL)))
                        .hasSize(6);
            }
            JobReport rep = ms.get(i).report();
            assertThat(rep.completed()).isEqualTo(6);
            ms.get(i).close();
        }
    }

    @Test
    @Order(3)
    void aKilledTunerResumesFromItsLogAndTheClusterCarriesOn() throws Exception {
        Path log = fx.dir.resolve("resume.jsonl");
        Path out = fx.dir.resolve("tuner.log");
        int trials = 10;
        // the killed tuner's programs take about 1.5 s each (two repeats of at least 700 ms), so that it dies while the
        // workers measure its programs
        List<String> cmd = List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--enable-native-access=ALL-UNNAMED",
                "--sun-misc-unsafe-memory-access=allow",
                "-cp",
                System.getProperty("java.class.path"),
                TunerMain.class.getName(),
                seed,
                fx.keyStore.toString(),
                log.toString(),
                Integer.toString(trials),
                "700");
        Process p = new ProcessBuilder(cmd)
                .redirectErrorStream(true)
                .redirectOutput(out.toFile())
                .start();
        long end = System.nanoTime() + TimeUnit.MINUTES.toNanos(3);
        while ((trialsIn(log) < 2 || !Files.readString(out).contains(TunerMain.BATCH + 2))
                && p.isAlive()
                && System.nanoTime() < end) Thread.sleep(100);
        assertThat(p.isAlive()).as("the tuner was still tuning (see %s)", out).isTrue();
        Thread.sleep(300); // the workers have the second batch's programs now (one round trip on loopback)
        p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        long killed = System.nanoTime();
        List<String> before = Files.readAllLines(log);
        int done = trialsIn(log);
        assertThat(done).isBetween(2, trials - 1);

        try (ClusterMeasurer m = ClusterMeasurer.on(tuner, Target.cpu(), OPTIONS, Duration.ofSeconds(60))) {
            AutoSchedule.tune(
                            DAG,
                            Target.cpu(),
                            tuneOptions(log, trials).measurer(m).build())
                    .close();
            double resumed = (System.nanoTime() - killed) / 1e9;
            assertThat(Files.readAllLines(log).subList(0, before.size())).isEqualTo(before);
            try (TuningLog l = TuningLog.open(log)) {
                List<String> programs = l.records().stream()
                        .filter(r -> r.kind().equals(LogRecord.TRIAL))
                        .map(r -> r.steps().toString())
                        .toList();
                assertThat(programs).hasSize(trials).doesNotHaveDuplicates();
            }
            assertThat(m.report().completed()).isEqualTo(trials - done);
            // the workers did not wait on the dead tuner: the cluster marks its node unreachable only after 20 s
            // (ClusterFixture.UNREACHABLE), and a worker stops waiting for a job's answer after 3 s
            assertThat(resumed)
                    .as("seconds from the kill to the resumed run's end: %s", m.report())
                    .isLessThan(20);
            for (LocalWorkers.Worker w : fx.workers.workers())
                if (w != bad) assertThat(w.process().isAlive()).isTrue();
        }
    }

    /** Three dense layers of distinct shapes: three tasks of a network, each a few hundred FLOPs. */
    static Graph tinyNetwork() {
        GraphBuilder g = new GraphBuilder("tiny");
        Value x = g.input("x", FLOAT32, 4, 16);
        Value h = g.relu("r1", g.dense("d1", x, g.weight("w1", 1, 0.5, 24, 16)));
        Value k = g.relu("r2", g.dense("d2", h, g.weight("w2", 2, 0.5, 12, 24)));
        return g.output(g.dense("d3", k, g.weight("w3", 3, 0.5, 8, 12))).build();
    }

    @Test
    @Order(4)
    void aNetworkTunedWithTheDefaultOptionsOverlapsRoundsLogsEveryTrialOnceAndResumes() {
        Graph net = tinyNetwork();
        Target cpu = Target.cpu();
        Path log = fx.dir.resolve("network.jsonl");
        int tasks = Network.tasks(net, cpu).size();
        assertThat(tasks).isEqualTo(3);
        try (ClusterMeasurer m = ClusterMeasurer.on(tuner, cpu, OPTIONS, Duration.ofSeconds(60));
                NDArray x = NDArray.random(FLOAT32, 9, 4, 16);
                NodeRunner ref = NodeRunner.interpreter()) {
            m.job().awaitWorkers(2, Duration.ofSeconds(60));
            // the default options but for the search (random sampling, for speed): no overlapRounds call
            NetworkTuneOptions.Builder opts = NetworkTuneOptions.builder()
                    .measuresPerRound(2)
                    .seed(5)
                    .logFile(log)
                    .measurer(m)
                    .policies(RandomSearchPolicy::forTask);
            NDArray expected = ReferenceExecutor.run(net, ref, x).getFirst();
            List<TaskResult> results;
            try (CompiledNetwork cn =
                            Network.tune(net, cpu, opts.trials(4 * tasks).build());
                    NDArray y = cn.run(x)) {
                SchedulerResult r = cn.tuning().orElseThrow();
                assertThat(r.trace().overlapped())
                        .as("a cluster measurer overlaps rounds by default")
                        .isTrue();
                assertThat(r.newTrials()).isEqualTo(4 * tasks);
                assertThat(r.deadTasks()).isEmpty();
                results = r.tasks();
                y.assertClose(expected, 1e-4, 1e-4);
            }
            assertThat(m.report().completed()).isEqualTo(4 * tasks);
            List<String> first = loggedTrials(log, results);
            assertThat(first).hasSize(4 * tasks).doesNotHaveDuplicates();
            List<String> lines = readLines(log);

            // resumed with the same budget: nothing is measured again
            try (CompiledNetwork again =
                            Network.tune(net, cpu, opts.trials(4 * tasks).build());
                    NDArray y = again.run(x)) {
                assertThat(again.tuning().orElseThrow().newTrials()).isZero();
                y.assertClose(expected, 1e-4, 1e-4);
            }
            assertThat(m.report().completed()).isEqualTo(4 * tasks);
            // resumed with more: only the new trials are measured, the old records stay as they were
            try (CompiledNetwork more =
                            Network.tune(net, cpu, opts.trials(6 * tasks).build());
                    NDArray y = more.run(x)) {
                assertThat(more.tuning().orElseThrow().newTrials()).isEqualTo(2 * tasks);
                assertThat(more.tuning().orElseThrow().trace().overlapped()).isTrue();
                y.assertClose(expected, 1e-4, 1e-4);
            }
            assertThat(m.report().completed()).isEqualTo(6 * tasks);
            assertThat(readLines(log).subList(0, lines.size())).isEqualTo(lines);
            assertThat(loggedTrials(log, results))
                    .hasSize(6 * tasks)
                    .doesNotHaveDuplicates()
                    .containsAll(first);
            expected.close();
        }
    }

    /**
     * The log's trial records as "workload key, program key", each checked to be in its own task: the workload key
     * and target of one of the tasks, a program that replays on that task; and every task has records.
     */
    static List<String> loggedTrials(Path log, List<TaskResult> tasks) {
        Map<String, TaskResult> byKey = new HashMap<>();
        for (TaskResult t : tasks) byKey.put(t.task().task().workloadKey(), t);
        List<String> out = new ArrayList<>();
        Map<String, Integer> counts = new HashMap<>();
        try (TuningLog l = TuningLog.open(log)) {
            for (LogRecord r : l.records()) {
                if (!r.kind().equals(LogRecord.TRIAL)) continue;
                TaskResult t = byKey.get(r.workloadKey());
                assertThat(t).as("the task of record %s", r).isNotNull();
                assertThat(r.target()).isEqualTo(t.task().task().targetDescription());
                assertThat(r.isValid()).as("%s", r).isTrue();
                Schedule s = r.schedule(t.task().task());
                out.add(r.workloadKey() + " " + Candidate.of(s).key());
                counts.merge(r.workloadKey(), 1, Integer::sum);
            }
        }
        for (TaskResult t : tasks)
            assertThat(counts.get(t.task().task().workloadKey())).isPositive();
        return out;
    }

    static List<String> readLines(Path p) {
        try {
            return Files.readAllLines(p);
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    static int trialsIn(Path log) {
        if (!Files.exists(log)) return 0;
        try (TuningLog l = TuningLog.open(log)) {
            return (int) l.records().stream()
                    .filter(r -> r.kind().equals(LogRecord.TRIAL))
                    .count();
        }
    }
}
