package dev.kiln.autoschedule.scheduler;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kiln.autoschedule.Candidate;
import dev.kiln.autoschedule.log.LogRecord;
import dev.kiln.autoschedule.log.TuningLog;
import dev.kiln.autoschedule.measure.Measurer;
import dev.kiln.autoschedule.search.RandomSearchPolicy;
import dev.kiln.autoschedule.tune.AutoSchedule;
import dev.kiln.te.ComputeDAG;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The task scheduler with {@code overlapRounds} over an asynchronous measurer with its own workers ({@link
 * PoolMeasurer}: 4 workers that sleep a program's time): rounds overlap and the workers idle less at the end of
 * rounds than with the round-by-round schedule; every program is measured once and logged once, in its own task's
 * records; a second run resumes from the log; a run is reproducible; a round whose measurement fails kills only its
 * task.
 */
class OverlapRoundsTest {
    static final int WORKERS = 4;
    static final long SLEEP_MS = 25;

    @TempDir
    Path dir;

    static List<TuningTask> tasks() {
        return List.of(
                new TuningTask(AutoSchedule.task(TaskSchedulerTest.matmul(), TaskSchedulerTest.CPU), 2, "", "matmul"),
                new TuningTask(AutoSchedule.task(TaskSchedulerTest.relu(), TaskSchedulerTest.CPU), 3, "", "relu"),
                new TuningTask(AutoSchedule.task(TaskSchedulerTest.scale(), TaskSchedulerTest.CPU), 1, "", "scale"));
    }

    /** 6 programs a round on 4 workers: without overlap, each round leaves 2 workers idle for its second wave. */
    static TaskSchedulerOptions.Builder opts(int trials, PoolMeasurer m, boolean overlap) {
        return TaskSchedulerOptions.builder()
                .trials(trials)
                .measuresPerRound(6)
                .seed(11)
                .measurer(m)
                .policies(RandomSearchPolicy::forTask)
                .overlapRounds(overlap);
    }

    record Run(SchedulerResult result, double idleSeconds, double tailSeconds, int overlapped, List<String> measured) {}

    Run run(Path log, int trials, boolean overlap, String failing) {
        return run(log, trials, overlap, failing, SLEEP_MS);
    }

    Run run(Path log, int trials, boolean overlap, String failing, long sleepMs) {
        try (PoolMeasurer m = new PoolMeasurer(TaskSchedulerTest.CPU, WORKERS, sleepMs, failing)) {
            long t0 = System.nanoTime();
            SchedulerResult r = new TaskScheduler(
                            tasks(), opts(trials, m, overlap).logFile(log).build())
                    .tune();
            double wall = (System.nanoTime() - t0) / 1e9;
            return new Run(r, WORKERS * wall - m.busySeconds(), m.partialIdleSeconds(), m.overlapped(), m.measured());
        }
    }

    /** The log's trial records (workload key + program key), in order. */
    static List<String> records(Path log) {
        Map<String, ComputeDAG> dags = tasks().stream()
                .collect(Collectors.toMap(
                        t -> t.task().workloadKey(), t -> t.task().dag()));
        List<String> out = new ArrayList<>();
        try (TuningLog l = TuningLog.open(log)) {
            for (LogRecord r : l.records()) {
                if (r.isRemeasure()) continue;
                assertThat(dags).containsKey(r.workloadKey());
                out.add(r.workloadKey() + " "
                        + Candidate.of(r.schedule(dags.get(r.workloadKey()))).key());
            }
        }
        return out;
    }

    @Test
    void roundsOverlapAndEveryProgramIsLoggedOnceInItsOwnTask() {
        Path syncLog = dir.resolve("sync.jsonl"), overlapLog = dir.resolve("overlap.jsonl");
        run(dir.resolve("warm-up.jsonl"), 18, false, ""); // class loading and JIT, not counted
        // programs of 100 ms, so that the tuner's own work between rounds stays short of a round even on a loaded
        // machine; 6 programs a round on 4 workers: round by round, each round idles 2 workers for a program's time
        // while the others measure (8 rounds: 1.6 s), with overlap only the ends of the warm-up and of the run do
        Run sync = run(syncLog, 48, false, "", 100);
        Run overlap = run(overlapLog, 48, true, "", 100);

        assertThat(sync.overlapped()).isZero();
        assertThat(overlap.overlapped()).isGreaterThan(0);
        System.out.printf(
                "idle workers while others measure: round by round %.3f s, overlapped %.3f s (all idle time %.3f s,"
                        + " %.3f s)%n",
                sync.tailSeconds(), overlap.tailSeconds(), sync.idleSeconds(), overlap.idleSeconds());
        assertThat(sync.tailSeconds()).isGreaterThan(0.8);
        assertThat(overlap.tailSeconds()).isLessThan(0.75 * sync.tailSeconds());

        SchedulerResult r = overlap.result();
        assertThat(r.trials()).isEqualTo(48);
        assertThat(overlap.measured()).hasSize(48);
        List<String> logged = records(overlapLog);
        assertThat(logged).hasSize(48).doesNotHaveDuplicates();
        for (TaskResult t : r.tasks()) {
            String key = t.task().task().workloadKey();
            List<LogRecord> own;
            try (TuningLog l = TuningLog.open(overlapLog)) {
                own = l.records(key, TaskSchedulerTest.CPU.toString());
            }
            assertThat(own).hasSize(t.trials());
            assertThat(t.trials()).isBetween(1, 6 * t.summary().rounds());
            double fastest = own.stream()
                    .filter(LogRecord::isValid)
                    .mapToDouble(LogRecord::seconds)
                    .min()
                    .orElseThrow();
            assertThat(t.bestSeconds()).isEqualTo(fastest);
        }
        assertThat(r.history()).hasSize(r.trace().order().size());
        assertThat(r.trace().order()).hasSizeGreaterThanOrEqualTo(8);

        // Reproducible: the same inputs give the same records in the same order, whatever the workers' timing.
        Path again = dir.resolve("again.jsonl");
        run(again, 48, true, "", 5);
        assertThat(records(again)).isEqualTo(logged);
    }

    @Test
    void byDefaultRoundsOverlapExactlyWhenTheMeasurerIsAsynchronous() {
        // no overlapRounds call: the default decides from the measurer
        try (PoolMeasurer m = new PoolMeasurer(TaskSchedulerTest.CPU, WORKERS, 5, "")) {
            TaskSchedulerOptions o = TaskSchedulerOptions.builder()
                    .trials(36)
                    .measuresPerRound(6)
                    .seed(11)
                    .measurer(m)
                    .policies(RandomSearchPolicy::forTask)
                    .build();
            assertThat(o.overlapRounds()).isEqualTo(RoundOverlap.WHEN_ASYNCHRONOUS);
            SchedulerResult r = new TaskScheduler(tasks(), o).tune();
            assertThat(r.trace().overlapped()).isTrue();
            assertThat(m.overlapped()).isGreaterThan(0);
            assertThat(r.trials()).isEqualTo(36);
            assertThat(m.measured()).hasSize(36).doesNotHaveDuplicates();
        }
        // the same workers behind a synchronous measurer (as the local child JVM is): round by round, the same
        // records as an explicit NEVER
        List<List<String>> measured = new ArrayList<>();
        for (RoundOverlap when : new RoundOverlap[] {RoundOverlap.WHEN_ASYNCHRONOUS, RoundOverlap.NEVER}) {
            try (PoolMeasurer pool = new PoolMeasurer(TaskSchedulerTest.CPU, WORKERS, 5, "");
                    Measurer sync = synchronous(pool)) {
                SchedulerResult r = new TaskScheduler(
                                tasks(),
                                TaskSchedulerOptions.builder()
                                        .trials(36)
                                        .measuresPerRound(6)
                                        .seed(11)
                                        .measurer(sync)
                                        .policies(RandomSearchPolicy::forTask)
                                        .overlapRounds(when)
                                        .build())
                        .tune();
                assertThat(r.trace().overlapped()).as("%s", when).isFalse();
                assertThat(pool.overlapped()).isZero();
                assertThat(r.trials()).isEqualTo(36);
                measured.add(pool.measured());
            }
        }
        assertThat(measured.get(0)).hasSize(36).containsExactlyInAnyOrderElementsOf(measured.get(1));
    }

    /** {@code m} without its asynchronous submit: every batch is measured before {@code measure} returns. */
    static Measurer synchronous(Measurer m) {
        return new Measurer() {
            @Override
            public dev.kiln.target.Target target() {
                return m.target();
            }

            @Override
            public dev.kiln.autoschedule.measure.MeasureOptions options() {
                return m.options();
            }

            @Override
            public List<dev.kiln.autoschedule.measure.MeasureResult> measure(
                    dev.kiln.autoschedule.SearchTask task, List<dev.kiln.schedule.Schedule> schedules) {
                return m.measure(task, schedules);
            }

            @Override
            public void close() {}
        };
    }

    @Test
    void anOverlappedRunResumesFromItsLog() {
        Path log = dir.resolve("resume.jsonl");
        run(log, 36, true, "");
        List<String> before = records(log);

        Run same = run(log, 36, true, "");
        assertThat(same.measured()).isEmpty();
        assertThat(same.result().newTrials()).isZero();

        Run more = run(log, 60, true, "");
        assertThat(more.measured()).hasSize(24);
        assertThat(more.result().trials()).isEqualTo(60);
        List<String> after = records(log);
        assertThat(after).hasSize(60).doesNotHaveDuplicates().containsAll(before);
        assertThat(new HashSet<>(after.subList(0, 36))).isEqualTo(new HashSet<>(before));
    }

    @Test
    void aRoundWhoseMeasurementFailsKillsOnlyItsTask() {
        String failing = tasks().get(1).task().workloadKey();
        Path log = dir.resolve("failing.jsonl");
        Run run = run(log, 48, true, failing);
        Map<String, TaskResult> byName = run.result().tasks().stream()
                .collect(Collectors.toMap(t -> t.task().description(), Function.identity()));
        assertThat(byName.get("relu").status()).isEqualTo(TaskStatus.FAILED);
        assertThat(byName.get("relu").summary().message()).contains("fake worker lost");
        assertThat(byName.get("relu").trials()).isZero();
        assertThat(byName.get("matmul").best()).isPresent();
        assertThat(byName.get("scale").best()).isPresent();
        assertThat(run.result().trials()).isEqualTo(48);
        assertThat(records(log)).hasSize(48).doesNotHaveDuplicates().noneMatch(k -> k.startsWith(failing + " "));
    }
}
