package dev.kiln.bench.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kiln.autoschedule.measure.MeasureResult;
import dev.kiln.ir.KilnException;
import dev.kiln.target.CudaTarget;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * Dispatching on a real cluster of worker JVMs (loopback, mutual TLS) with simulated measurements: fair sharing
 * between two jobs, routing by target, a job that stops while workers measure its programs, a simulated network tune
 * with overlapping rounds, a tuner node that is downed mid-batch and joins again, and workers that die or leave
 * mid-batch. The tests share one cluster and run in order, since the last one kills workers.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ClusterSimulatedTest {
    static ClusterFixture fx;
    static ClusterNode tuner;
    static List<LocalWorkers.Worker> workers;
    /** A simulated GPU worker: its programs' target is a CUDA target, the three others' the CPU's ("simulated"). */
    static LocalWorkers.Worker other;

    static final String GPU = "simulated:" + new CudaTarget("sm_80", 1024, 49152, 32);

    @BeforeAll
    static void start() throws Exception {
        fx = new ClusterFixture();
        tuner = fx.seedTuner();
        // the worker of another target starts while the three do (JVM start-up is most of this class's time)
        CompletableFuture<LocalWorkers.Worker> another = CompletableFuture.supplyAsync(() -> fx.workers
                .start(
                        1,
                        tuner.address(),
                        0,
                        ClusterFixture.args("--simulate", "--target", GPU.substring("simulated:".length())),
                        Duration.ofMinutes(2))
                .getFirst());
        workers = fx.workers.start(3, tuner.address(), 0, ClusterFixture.args("--simulate"), Duration.ofMinutes(2));
        other = another.join();
    }

    @AfterAll
    static void stop() {
        // the tuner leaves first: with its workers gone, no member would confirm its leaving (10 s more)
        if (tuner != null) tuner.close();
        if (fx != null) fx.close();
    }

    /** Items of distinct costs, so that a result sent back to the wrong item shows. */
    static List<WorkItem> items(int n, double seconds, double costBase) {
        List<WorkItem> out = new ArrayList<>();
        for (int i = 0; i < n; i++) out.add(WorkItem.simulated(seconds, costBase + i * 1e-6));
        return out;
    }

    static void assertAnswered(List<MeasureResult> rs, int n, double costBase) {
        assertThat(rs).hasSize(n);
        for (int i = 0; i < n; i++) {
            assertThat(rs.get(i).ok())
                    .as("result %d: %s", i, rs.get(i).errorMessage())
                    .isTrue();
            assertThat(rs.get(i).costsSeconds()[0])
                    .isCloseTo(costBase + i * 1e-6, org.assertj.core.data.Offset.offset(1e-12));
        }
    }

    /** The batch's results, or a failure that carries the job's report, the members and the workers' last lines. */
    static List<MeasureResult> awaitOrDiagnose(
            CompletableFuture<List<MeasureResult>> rs, ClusterJob job, Duration timeout) throws Exception {
        try {
            return rs.get(timeout.toSeconds(), java.util.concurrent.TimeUnit.SECONDS);
        } catch (java.util.concurrent.TimeoutException e) {
            StringBuilder why = new StringBuilder("no answer within " + timeout.toSeconds() + " s; rejoins "
                    + job.rejoins() + ", job node " + job.node().address() + " up "
                    + job.node().isUp()
                    + ", seed sees " + tuner.members() + " members");
            try {
                why.append("; report ").append(job.report());
            } catch (RuntimeException r) {
                why.append("; no report: ").append(r.getMessage());
            }
            for (LocalWorkers.Worker w : fx.workers.workers()) {
                if (w.log() == null || !java.nio.file.Files.exists(w.log())) continue;
                List<String> lines = java.nio.file.Files.readAllLines(w.log());
                why.append("\n--- worker ").append(w.address()).append(":\n");
                why.append(String.join("\n", lines.subList(Math.max(0, lines.size() - 30), lines.size())));
            }
            throw new AssertionError(why.toString(), e);
        }
    }

    static String port(String address) {
        return address.substring(address.lastIndexOf(':') + 1);
    }

    @Test
    @Order(0)
    void aSimulatedNetworkTuneWithOverlappingRoundsMeasuresEveryTrialOnce() {
        try (ClusterJob job = new ClusterJob(tuner, "simulated", Duration.ofSeconds(30))) {
            job.awaitWorkers(3, Duration.ofSeconds(30));
            double[] times = new double[36];
            for (int i = 0; i < times.length; i++) times[i] = 0.05 + 0.01 * (i % 7);
            // 3 tasks, rounds of 6 on 3 workers: the scheduler keeps the next task's round queued behind each round
            ScaleBench.Row r = SimulatedNetwork.run(job, 3, times, 6, 3, true, 0, 5);
            assertThat(r.trials()).isEqualTo(36);
            double sum = java.util.Arrays.stream(times).sum();
            assertThat(r.idealSeconds()).isCloseTo(sum / 3, org.assertj.core.data.Offset.offset(1e-9));
            JobReport rep = job.report();
            assertThat(rep.completed()).isEqualTo(36);
            assertThat(rep.byWorker().values().stream()
                            .mapToLong(Long::longValue)
                            .sum())
                    .isEqualTo(36);
            assertThat(rep.faults()).isEmpty();
            System.out.printf(
                    java.util.Locale.ROOT,
                    "simulated network on 3 workers: efficiency %.1f%%, round-by-round bound %.1f%%%n",
                    100 * r.efficiency(),
                    100 * r.bound());
        }
    }

    @Test
    @Order(1)
    void twoJobsShareTheWorkersFairlyAndAWorkerOfAnotherTargetNeverMeasures() throws Exception {
        try (ClusterJob a = new ClusterJob(tuner, "simulated", Duration.ofSeconds(30));
                ClusterJob b = new ClusterJob(tuner, "simulated", Duration.ofSeconds(30))) {
            a.awaitWorkers(3, Duration.ofSeconds(30));
            b.awaitWorkers(3, Duration.ofSeconds(30));
            int n = 18;
            long t0 = System.nanoTime();
            CompletableFuture<Long> endA = CompletableFuture.supplyAsync(() -> {
                assertAnswered(a.run(items(n, 0.15, 0.001), Map.of()), n, 0.001);
                return System.nanoTime() - t0;
            });
            CompletableFuture<Long> endB = CompletableFuture.supplyAsync(() -> {
                assertAnswered(b.run(items(n, 0.15, 0.002), Map.of()), n, 0.002);
                return System.nanoTime() - t0;
            });
            long ta = endA.get();
            long tb = endB.get();
            // shared evenly, the two jobs finish together; served one after the other, one would take half as long
            assertThat((double) Math.min(ta, tb) / Math.max(ta, tb)).isGreaterThan(0.75);
            for (ClusterJob j : List.of(a, b)) {
                JobReport r = j.report();
                assertThat(r.completed()).isEqualTo(n);
                assertThat(r.byWorker().values().stream()
                                .mapToLong(Long::longValue)
                                .sum())
                        .isEqualTo(n);
                assertThat(r.byWorker().keySet()).noneMatch(w -> w.contains(":" + port(other.address()) + "/"));
                assertThat(r.faults()).isEmpty();
            }
        }
    }

    /** Whether the report says the worker at {@code w}'s address holds a program. */
    static boolean holds(JobReport r, LocalWorkers.Worker w) {
        return r.holding().keySet().stream().anyMatch(id -> id.contains(":" + port(w.address()) + "/"));
    }

    @Test
    @Order(2)
    void workersDropTheProgramsOfAJobThatStopsAndServeTheNextAtOnce() throws Exception {
        CompletableFuture<List<MeasureResult>> abandoned;
        try (ClusterJob gone = new ClusterJob(tuner, "simulated", Duration.ofSeconds(30))) {
            gone.awaitWorkers(3, Duration.ofSeconds(30));
            // 60 s programs: a worker that kept measuring them would hold the next job up for a minute
            abandoned = CompletableFuture.supplyAsync(() -> gone.run(items(3, 60, 0.004), Map.of()));
            long end = System.nanoTime() + 60_000_000_000L;
            while (gone.report().holding().size() < 3 && System.nanoTime() < end) Thread.sleep(20);
            assertThat(gone.report().holding()).hasSize(3);
        }
        assertThatThrownBy(abandoned::join).hasCauseInstanceOf(KilnException.class);
        try (ClusterJob job = new ClusterJob(tuner, "simulated", Duration.ofSeconds(30))) {
            job.awaitWorkers(3, Duration.ofSeconds(30));
            long t0 = System.nanoTime();
            assertAnswered(job.run(items(6, 0.2, 0.005), Map.of()), 6, 0.005);
            assertThat((System.nanoTime() - t0) / 1e9).isLessThan(20);
        }
    }

    @Test
    @Order(3)
    void aCpuJobAndAGpuJobEachMeasureOnlyOnWorkersOfTheirOwnTarget() throws Exception {
        try (ClusterJob cpu = new ClusterJob(tuner, "simulated", Duration.ofSeconds(30));
                ClusterJob gpu = new ClusterJob(tuner, GPU, Duration.ofSeconds(30))) {
            cpu.awaitWorkers(3, Duration.ofSeconds(30));
            gpu.awaitWorkers(1, Duration.ofSeconds(30));
            int n = 8;
            CompletableFuture<List<MeasureResult>> onCpu =
                    CompletableFuture.supplyAsync(() -> cpu.run(items(n, 0.05, 0.011), Map.of()));
            CompletableFuture<List<MeasureResult>> onGpu =
                    CompletableFuture.supplyAsync(() -> gpu.run(items(n, 0.05, 0.012), Map.of()));
            assertAnswered(onCpu.get(), n, 0.011);
            assertAnswered(onGpu.get(), n, 0.012);
            String gpuWorker = ":" + port(other.address()) + "/";
            JobReport c = cpu.report();
            assertThat(c.byWorker().values().stream().mapToLong(Long::longValue).sum())
                    .isEqualTo(n);
            assertThat(c.byWorker().keySet()).as("%s", c).noneMatch(w -> w.contains(gpuWorker));
            JobReport g = gpu.report();
            assertThat(g.byWorker()).as("%s", g).hasSize(1);
            assertThat(g.byWorker().keySet()).allMatch(w -> w.contains(gpuWorker));
            assertThat(g.byWorker().values().iterator().next()).isEqualTo(n);
        }
    }

    @Test
    @Order(6)
    void programsOfAWorkerThatDiesOrLeavesMidBatchGoToTheOthersOnce() throws Exception {
        try (ClusterJob job = new ClusterJob(tuner, "simulated", Duration.ofSeconds(30))) {
            job.awaitWorkers(3, Duration.ofSeconds(30));
            int n = 12;
            CompletableFuture<List<MeasureResult>> rs =
                    CompletableFuture.supplyAsync(() -> job.run(items(n, 1.5, 0.003), Map.of()));
            // kill the workers while the job knows they hold programs (1.5 s each, and with the worker's queue of 2
            // one more asked for ahead, which no result can have answered yet)
            long end = System.nanoTime() + 60_000_000_000L;
            JobReport held = job.report();
            while (!(holds(held, workers.get(0)) && holds(held, workers.get(1))) && System.nanoTime() < end) {
                Thread.sleep(20);
                held = job.report();
            }
            assertThat(holds(held, workers.get(0)))
                    .as("worker 0 holds a program: %s", held)
                    .isTrue();
            workers.get(0).kill(); // dies: SIGKILL, no goodbye
            workers.get(1).process().destroy(); // leaves: SIGTERM, the worker leaves (it may finish its program)
            assertAnswered(rs.get(), n, 0.003);
            JobReport r = job.report();
            assertThat(r.completed()).isEqualTo(n);
            assertThat(r.requeued())
                    .as("the dead worker's programs were re-queued: %s", r)
                    .isGreaterThanOrEqualTo(1);
            assertThat(r.dispatched()).isEqualTo(n + r.requeued());
            assertThat(r.byWorker().values().stream().mapToLong(Long::longValue).sum())
                    .isEqualTo(n);
        }
    }

    /**
     * Submits 4 programs of 0.5 s (costs from {@code costBase}) once the 3 workers are known, waits until a worker
     * holds some, then downs the job's node; returns the batch's results.
     */
    private static CompletableFuture<List<MeasureResult>> submitThenDownTheNode(ClusterJob job, double costBase)
            throws InterruptedException {
        job.awaitWorkers(3, Duration.ofSeconds(60));
        ClusterNode node = job.node();
        CompletableFuture<List<MeasureResult>> rs = job.submit(items(4, 0.5, costBase), Map.of());
        long end = System.nanoTime() + 60_000_000_000L;
        while (job.report().holding().isEmpty() && System.nanoTime() < end) Thread.sleep(20);
        var cluster = org.apache.pekko.cluster.typed.Cluster.get(node.system());
        cluster.manager()
                .tell(new org.apache.pekko.cluster.typed.Down(
                        cluster.selfMember().address()));
        return rs;
    }

    /**
     * After a batch submitted before the job's node was downed has been answered: waits until the node sees itself
     * gone, then runs one more batch, which a rejoining job sends from a fresh node. The batch may have been answered
     * either way: by a fresh node (the job saw the Down first and stopped the old node) or by the old one, when the
     * workers' results reached it before it saw itself Down (slow gossip on a loaded host; a downed node that does
     * not shut itself down is not stopped until the job sends again). Both end with one rejoin and the old node
     * stopped by the job.
     */
    private static void assertNextBatchRejoins(ClusterJob job, ClusterNode first, double costBase) throws Exception {
        long end = System.nanoTime() + 60_000_000_000L;
        while (!first.isGone() && System.nanoTime() < end) Thread.sleep(20);
        assertThat(first.isGone())
                .as("the first node sees itself downed within 60 s")
                .isTrue();
        int before = job.rejoins();
        assertAnswered(job.run(items(2, 0.1, costBase), Map.of()), 2, costBase);
        assertThat(job.rejoins())
                .as("one rejoin (%d before the next batch)", before)
                .isEqualTo(1);
        assertThat(job.node()).isNotSameAs(first);
        // the job stopped the old node before it started the fresh one (5 s for it to stop by itself, then
        // terminate()): its coordinated shutdown has begun. How long Pekko then takes to end the actor system is not
        // the job's to bound and is not asserted: its phases time out one by one (about 35 s here) and CI runs on
        // loaded hosts saw a downed node still running 70 s, once more than 180 s, after terminate()
        assertThat(first.system().getWhenTerminated().toCompletableFuture().isDone()
                        || org.apache.pekko.actor.CoordinatedShutdown.get(first.system())
                                .getShutdownReason()
                                .isPresent())
                .as("the downed node stopped or is stopping")
                .isTrue();
        // the new node answered as soon as it had joined; the cluster marks it Up a little later (on convergence)
        assertThat(job.node().awaitUp(Duration.ofSeconds(30)))
                .as("the rejoined node is Up within 30 s")
                .isTrue();
    }

    @Test
    @Order(4)
    void aTunerNodeRemovedFromTheClusterJoinsAgainAndItsBatchIsMeasured() throws Exception {
        // a tuner of its own (port 0), joining through the seed; it runs before workers are killed, since with two
        // unreachable workers and a downed tuner the split brain resolver may down the seed's side too
        ClusterSettings s = fx.settings(0, List.of(tuner.address()));
        try (ClusterJob job = ClusterJob.rejoining(s, List.of("tuner"), "simulated", Duration.ofSeconds(60))) {
            ClusterNode first = job.node();
            // the node is downed, as the cluster does to a member silent for too long: it stops
            CompletableFuture<List<MeasureResult>> rs = submitThenDownTheNode(job, 0.007);
            // normally answered within seconds; one CI run on an overloaded host waited past 120 s, so the deadline is
            // generous and a miss says what the job, the cluster and the workers saw
            assertAnswered(awaitOrDiagnose(rs, job, Duration.ofSeconds(300)), 4, 0.007);
            // two CI runs (2026-12-05, 2026-12-06) found the downed node still running after the batch, most likely
            // because the workers' results reached it before it saw itself Down (so no rejoin had stopped it) and it
            // did not shut itself down (as the test below simulates): the next batch is what stops it
            assertNextBatchRejoins(job, first, 0.008);
            // and it goes on measuring
            assertAnswered(job.run(items(2, 0.1, 0.010), Map.of()), 2, 0.010);
        }
    }

    @Test
    @Order(5)
    void aDownedTunerNodeThatDoesNotStopByItselfIsStoppedAndTheJobRejoins() throws Exception {
        // the tuner's nodes do not run their shutdown when downed: the state two CI runs met, where a downed node
        // never stopped and the job waited on its termination past 300 s
        ClusterSettings s = fx.settings(0, List.of(tuner.address()));
        var stayWhenDown =
                com.typesafe.config.ConfigFactory.parseString("pekko.cluster.run-coordinated-shutdown-when-down = off");
        try (ClusterJob job = ClusterJob.rejoining(
                () -> ClusterNode.start(s, List.of("tuner"), stayWhenDown), "simulated", Duration.ofSeconds(60))) {
            ClusterNode first = job.node();
            CompletableFuture<List<MeasureResult>> rs = submitThenDownTheNode(job, 0.009);
            assertAnswered(awaitOrDiagnose(rs, job, Duration.ofSeconds(120)), 4, 0.009);
            assertNextBatchRejoins(job, first, 0.011);
        }
    }
}
