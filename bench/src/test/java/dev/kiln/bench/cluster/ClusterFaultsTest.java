package dev.kiln.bench.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kiln.autoschedule.SearchTask;
import dev.kiln.autoschedule.log.LogRecord;
import dev.kiln.autoschedule.log.TuningLog;
import dev.kiln.autoschedule.measure.FaultInjection;
import dev.kiln.autoschedule.measure.MeasureError;
import dev.kiln.autoschedule.measure.MeasureOptions;
import dev.kiln.autoschedule.measure.MeasureResult;
import dev.kiln.autoschedule.tune.AutoSchedule;
import dev.kiln.ir.KilnException;
import dev.kiln.schedule.Schedule;
import dev.kiln.target.Target;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * Crash and hang isolation on a cluster worker: the worker (its {@code --fault-injection} test hook) makes its child
 * JVM abort on its second program and hang past the per-program time-out on its third. The tuner gets a {@link
 * MeasureError#CRASH} and a {@link MeasureError#TIMEOUT} for them, as from the local ProcessMeasurer, the log holds
 * every program once, and the same worker process lives on and measures the next programs correctly (against the
 * reference outputs it checks).
 */
class ClusterFaultsTest {
    static final MeasureOptions OPTIONS = ClusterTuneTest.OPTIONS.withTimeoutSeconds(8);

    @Test
    void aCrashingAndAHangingChildCostTheirProgramOnlyAndTheWorkerMeasuresOn() throws Exception {
        try (ClusterFixture fx = new ClusterFixture()) {
            int port = LocalWorkers.freePort();
            fx.workers.start(
                    1,
                    null,
                    port,
                    ClusterFixture.args("--fault-injection", "crash@2", "--fault-injection", "hang@3"),
                    Duration.ofMinutes(2));
            LocalWorkers.Worker worker = fx.workers.workers().getFirst(); // the seed
            ClusterNode tuner = ClusterNode.start(fx.settings(0, List.of("127.0.0.1:" + port)), List.of("tuner"));
            try (tuner;
                    ClusterMeasurer m = ClusterMeasurer.on(tuner, Target.cpu(), OPTIONS, Duration.ofSeconds(60))) {
                assertThat(tuner.awaitUp(Duration.ofSeconds(60))).isTrue();
                m.job().awaitWorkers(1, Duration.ofSeconds(60));
                Path log = fx.dir.resolve("faults.jsonl");
                int trials = 4;
                AutoSchedule.tune(
                                ClusterTuneTest.DAG,
                                Target.cpu(),
                                ClusterTuneTest.tuneOptions(log, trials)
                                        .measureOptions(OPTIONS)
                                        .measurer(m)
                                        .build())
                        .close();

                List<LogRecord> records;
                try (TuningLog l = TuningLog.open(log)) {
                    records = l.records().stream()
                            .filter(r -> r.kind().equals(LogRecord.TRIAL))
                            .toList();
                }
                assertThat(records.stream().map(r -> r.steps().toString()))
                        .hasSize(trials)
                        .doesNotHaveDuplicates();
                Map<String, Long> kinds =
                        records.stream().collect(Collectors.groupingBy(LogRecord::errorKind, Collectors.counting()));
                assertThat(kinds)
                        .containsExactlyInAnyOrderEntriesOf(Map.of(
                                MeasureError.CRASH.name(),
                                1L,
                                MeasureError.TIMEOUT.name(),
                                1L,
                                LogRecord.NO_ERROR,
                                (long) trials - 2));
                Map<String, LogRecord> byKind = records.stream()
                        .collect(Collectors.toMap(LogRecord::errorKind, Function.identity(), (a, b) -> a));
                assertThat(byKind.get(MeasureError.CRASH.name()).errorMessage()).contains("SIGABRT");
                assertThat(byKind.get(MeasureError.TIMEOUT.name()).errorMessage())
                        .contains("no result after 8.0 s")
                        .contains("killed");
                assertThat(records)
                        .filteredOn(r -> r.errorKind().equals(LogRecord.NO_ERROR))
                        .allSatisfy(r -> assertThat(r.costs()).hasSize(2).allSatisfy(c -> assertThat(c)
                                .isPositive()));
                assertThat(m.report().completed()).isEqualTo(trials);

                // the worker process that lost two children measures on, and its checks pass
                assertThat(worker.process().isAlive()).isTrue();
                SearchTask task = SearchTask.of(ClusterTuneTest.DAG, Target.cpu());
                List<MeasureResult> after = m.measure(task, List.of(Schedule.empty(ClusterTuneTest.DAG)));
                assertThat(after)
                        .singleElement()
                        .satisfies(r -> assertThat(r.ok()).as(r.errorMessage()).isTrue());
                assertThat(worker.process().isAlive()).isTrue();
                assertThat(m.report().quarantined()).isEmpty();
            }
        }
    }

    @Test
    void faultInjectionSpecsAreParsedAndBadOnesNamed() {
        assertThat(WorkerCommand.faults(List.of("crash@2", "HANG@3")))
                .containsExactlyInAnyOrderEntriesOf(Map.of(2, FaultInjection.Kind.CRASH, 3, FaultInjection.Kind.HANG));
        for (String bad : List.of("crash", "crash@0", "hang@x", "melt@1")) {
            assertThatThrownBy(() -> WorkerCommand.faults(List.of(bad)))
                    .isInstanceOf(KilnException.class)
                    .hasMessageContaining(bad.startsWith("melt") ? "'melt'" : "'" + bad + "'");
        }
        assertThatThrownBy(() -> WorkerCommand.faults(List.of("crash@2", "hang@2")))
                .isInstanceOf(KilnException.class)
                .hasMessageContaining("two faults");
    }
}
