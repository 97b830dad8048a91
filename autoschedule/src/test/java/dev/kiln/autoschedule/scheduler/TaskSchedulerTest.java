package dev.kiln.autoschedule.scheduler;

import static dev.kiln.ir.DType.FLOAT32;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kiln.autoschedule.Candidate;
import dev.kiln.autoschedule.SearchTask;
import dev.kiln.autoschedule.log.LogRecord;
import dev.kiln.autoschedule.log.TuningLog;
import dev.kiln.autoschedule.measure.MeasureError;
import dev.kiln.autoschedule.measure.MeasureResult;
import dev.kiln.autoschedule.search.FakeMeasurer;
import dev.kiln.autoschedule.search.RandomSearchPolicy;
import dev.kiln.autoschedule.tune.AutoSchedule;
import dev.kiln.ir.KilnException;
import dev.kiln.nn.Activation;
import dev.kiln.nn.Linalg;
import dev.kiln.schedule.Schedule;
import dev.kiln.target.CpuTarget;
import dev.kiln.te.ComputeDAG;
import dev.kiln.te.Te;
import dev.kiln.te.Tensor;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The task scheduler over real small tasks, measured by the search tests' fake measurer: resume and robustness. */
class TaskSchedulerTest {
    static final CpuTarget CPU = new CpuTarget("x86_64-unknown-linux-gnu", "znver4", "+avx2,+fma", 2, 256, 64);

    @TempDir
    Path dir;

    static ComputeDAG matmul() {
        Tensor a = Te.placeholder("A", FLOAT32, 16, 12);
        Tensor b = Te.placeholder("B", FLOAT32, 12, 20);
        return ComputeDAG.of(Linalg.matmul(a, b));
    }

    /** A matmul with a relu epilogue: a fused subgraph with a search space as large as the matmul's. */
    static ComputeDAG relu() {
        Tensor a = Te.placeholder("X", FLOAT32, 8, 24);
        Tensor b = Te.placeholder("W", FLOAT32, 24, 12);
        return ComputeDAG.of(Activation.relu(Linalg.matmul(a, b)));
    }

    static ComputeDAG scale() {
        Tensor x = Te.placeholder("Y", FLOAT32, 8, 40);
        return ComputeDAG.of(
                Te.compute("S", Te.shape(8, 40), (i, j) -> x.at(i, j).mul(Te.f32(3))));
    }

    static List<TuningTask> tasks() {
        return List.of(
                new TuningTask(AutoSchedule.task(matmul(), CPU), 2, "dense", "matmul 16x20x12"),
                new TuningTask(AutoSchedule.task(relu(), CPU), 3, "", "matmul+relu 8x12x24"));
    }

    static TaskSchedulerOptions.Builder opts(int trials, FakeMeasurer m) {
        return TaskSchedulerOptions.builder()
                .trials(trials)
                .measuresPerRound(4)
                .seed(7)
                .measurer(m)
                .policies(RandomSearchPolicy::forTask);
    }

    static Set<String> keys(Path log, List<TuningTask> tasks) {
        Set<String> out = new HashSet<>();
        for (LogRecord r : TuningLog.open(log).records()) {
            ComputeDAG dag = tasks.stream()
                    .map(t -> t.task().dag())
                    .filter(d -> d.workloadKey().equals(r.workloadKey()))
                    .findFirst()
                    .orElseThrow();
            out.add(r.workloadKey() + Candidate.of(r.schedule(dag)).key());
        }
        return out;
    }

    @Test
    void aSecondTuneOverTheSameLogMeasuresNothingAlreadyMeasured() throws Exception {
        Path log = dir.resolve("net.jsonl"), tsv = dir.resolve("total_latency.tsv");
        FakeMeasurer first = new FakeMeasurer(CPU, 4, new java.util.concurrent.atomic.AtomicLong(), 0);
        SchedulerResult a = new TaskScheduler(
                        tasks(), opts(24, first).logFile(log).latencyTsv(tsv).build())
                .tune();
        assertThat(a.trials()).isEqualTo(24);
        assertThat(first.measured()).hasSize(24);
        assertThat(TuningLog.open(log).records()).hasSize(24);
        assertThat(a.tasks()).allSatisfy(t -> {
            assertThat(t.best()).isPresent();
            assertThat(t.trials()).isEqualTo(t.summary().rounds() * 4);
            // Each task's best is the fastest valid record of its workload in the log.
            double fastest = TuningLog.open(log).records(t.task().task().workloadKey(), CPU.toString()).stream()
                    .filter(LogRecord::isValid)
                    .mapToDouble(LogRecord::seconds)
                    .min()
                    .orElseThrow();
            assertThat(t.bestSeconds()).isEqualTo(fastest);
        });
        // Objective = 2 * best(matmul) + 3 * best(relu), after every one of the 6 rounds.
        double expected =
                2 * a.tasks().get(0).bestSeconds() + 3 * a.tasks().get(1).bestSeconds();
        assertThat(a.objective()).isEqualTo(expected);
        assertThat(a.history()).hasSize(6);
        assertThat(a.history().getLast().latencySeconds()).isEqualTo(expected);
        assertThat(Files.readAllLines(tsv))
                .hasSize(6)
                .last()
                .asString()
                .startsWith("ElapsedTime(s)\t")
                .endsWith("\tTrials\t24");
        Set<String> before = keys(log, tasks());

        // Same budget: every trial is restored, nothing is measured, the same bests come back.
        FakeMeasurer second = new FakeMeasurer(CPU, 4, new java.util.concurrent.atomic.AtomicLong(), 0);
        SchedulerResult b =
                new TaskScheduler(tasks(), opts(24, second).logFile(log).build()).tune();
        assertThat(second.measured()).isEmpty();
        assertThat(b.newTrials()).isZero();
        assertThat(b.trace().order()).isEmpty();
        for (int i = 0; i < 2; i++) {
            assertThat(b.tasks().get(i).restoredTrials())
                    .isEqualTo(a.tasks().get(i).trials());
            assertThat(b.tasks().get(i).bestSeconds())
                    .isEqualTo(a.tasks().get(i).bestSeconds());
            // The scheduler's counters start from the log: rounds = trials / per_round.
            assertThat(b.tasks().get(i).summary().rounds())
                    .isEqualTo(a.tasks().get(i).summary().rounds());
        }

        // A bigger budget measures only new programs, and skips the warm-up (both tasks had a valid program).
        FakeMeasurer third = new FakeMeasurer(CPU, 4, new java.util.concurrent.atomic.AtomicLong(), 0);
        SchedulerResult c =
                new TaskScheduler(tasks(), opts(40, third).logFile(log).build()).tune();
        assertThat(c.trials()).isEqualTo(40);
        assertThat(c.newTrials()).isEqualTo(16);
        assertThat(third.measured()).hasSize(16);
        assertThat(c.history().getFirst().task()).isEqualTo(-1);
        assertThat(c.history().getFirst().trials()).isEqualTo(24);
        Set<String> after = keys(log, tasks());
        assertThat(after).hasSize(40).containsAll(before);
    }

    @Test
    void aTaskWhoseProgramsAllFailOrWhoseMeasurerThrowsDoesNotStopTheOthers() {
        ComputeDAG bad = relu(), broken = scale();
        FakeMeasurer m = new FakeMeasurer(CPU) {
            @Override
            public List<MeasureResult> measure(SearchTask task, List<Schedule> schedules) {
                if (task.workloadKey().equals(broken.workloadKey()))
                    throw new IllegalStateException("worker cannot start");
                if (!task.workloadKey().equals(bad.workloadKey())) return super.measure(task, schedules);
                List<MeasureResult> out = new ArrayList<>();
                for (Schedule s : schedules) out.add(MeasureResult.failed(MeasureError.CRASH, "segfault", 0.01, 0.02));
                return out;
            }
        };
        List<TuningTask> tasks = List.of(
                TuningTask.of(AutoSchedule.task(matmul(), CPU), 1),
                TuningTask.of(AutoSchedule.task(bad, CPU), 1),
                TuningTask.of(AutoSchedule.task(broken, CPU), 1));
        // per_round = min(4, 30 / 3) = 4: warm-up 4 + 4 + 0 (the throwing round), then the matmul alone up to 30.
        SchedulerResult r = new TaskScheduler(tasks, opts(30, m).build()).tune();
        assertThat(r.trials()).isEqualTo(30);
        assertThat(r.tasks().get(0).status()).isEqualTo(TaskStatus.ALIVE);
        assertThat(r.tasks().get(0).trials()).isEqualTo(26);
        assertThat(r.tasks().get(0).best()).isPresent();
        TaskResult crashed = r.tasks().get(1);
        assertThat(crashed.status()).isEqualTo(TaskStatus.NO_VALID_PROGRAM);
        assertThat(crashed.trials()).isEqualTo(4);
        assertThat(crashed.errorsByKind()).containsEntry("CRASH", 4);
        assertThat(crashed.firstErrors().get("CRASH")).isEqualTo("segfault");
        assertThat(r.tasks().get(2).status()).isEqualTo(TaskStatus.FAILED);
        assertThat(r.tasks().get(2).summary().message()).contains("worker cannot start");
        assertThat(r.deadTasks()).hasSize(2);
        assertThat(r.objective()).isNaN();
        assertThat(r.table()).contains("no_valid_program").contains("failed");
    }

    @Test
    void everyTasksWorkloadIsPreparedOnceBeforeTheFirstMeasurement() {
        List<String> calls = new ArrayList<>();
        FakeMeasurer m = new FakeMeasurer(CPU) {
            @Override
            public void prepare(List<SearchTask> tasks, int threads) {
                calls.add("prepare " + tasks.size() + " on " + threads);
            }

            @Override
            public List<MeasureResult> measure(SearchTask task, List<Schedule> schedules) {
                calls.add("measure");
                return super.measure(task, schedules);
            }
        };
        new TaskScheduler(tasks(), opts(8, m).build()).tune();
        assertThat(calls.get(0))
                .isEqualTo("prepare 2 on " + Runtime.getRuntime().availableProcessors());
        assertThat(calls.subList(1, calls.size())).isNotEmpty().containsOnly("measure");
    }

    @Test
    void tasksShareOneCostModelWhenAsked() {
        List<dev.kiln.autoschedule.model.CostModel> models = new ArrayList<>();
        TaskSchedulerOptions o = TaskSchedulerOptions.builder()
                .trials(16)
                .measuresPerRound(4)
                .seed(3)
                .measurer(new FakeMeasurer(CPU))
                .sharedCostModel(true)
                .sharedModel(seed -> new dev.kiln.autoschedule.model.RandomCostModel(seed))
                .sharedModelPolicies((task, model, seed) -> {
                    models.add(model);
                    return RandomSearchPolicy.forTask(task, seed);
                })
                .build();
        SchedulerResult r = new TaskScheduler(tasks(), o).tune();
        assertThat(r.trials()).isEqualTo(16);
        assertThat(models).hasSize(2);
        assertThat(models.get(0)).isSameAs(models.get(1));
    }

    @Test
    void theSameWorkloadTwiceIsAnError() {
        SearchTask t = AutoSchedule.task(matmul(), CPU);
        assertThatThrownBy(() -> new TaskScheduler(
                        List.of(new TuningTask(t, 1, "", "a"), new TuningTask(t, 2, "", "b")),
                        TaskSchedulerOptions.defaults()))
                .isInstanceOf(KilnException.class)
                .hasMessageContaining("'a'")
                .hasMessageContaining("'b'");
        assertThatThrownBy(() -> new TuningTask(t, 0, "", "zero"))
                .isInstanceOf(KilnException.class)
                .hasMessageContaining("zero");
    }
}
