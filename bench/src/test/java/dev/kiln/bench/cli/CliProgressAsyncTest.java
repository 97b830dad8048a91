package dev.kiln.bench.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kiln.autoschedule.scheduler.SchedulerResult;
import dev.kiln.autoschedule.scheduler.TaskScheduler;
import dev.kiln.autoschedule.scheduler.TaskSchedulerOptions;
import dev.kiln.autoschedule.scheduler.TuningTask;
import dev.kiln.autoschedule.search.RandomSearchPolicy;
import dev.kiln.autoschedule.tune.AutoSchedule;
import dev.kiln.nn.Activation;
import dev.kiln.nn.Linalg;
import dev.kiln.target.CpuTarget;
import dev.kiln.te.ComputeDAG;
import dev.kiln.te.Te;
import dev.kiln.te.Tensor;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The CLI's progress wrapper keeps an asynchronous measurer asynchronous: the task scheduler's default overlaps the
 * rounds of a wrapped cluster-like measurer as it does the bare one's, every trial is measured once, and the
 * progress counts them all; a wrapped synchronous measurer stays round by round.
 */
class CliProgressAsyncTest {
    static final CpuTarget CPU = new CpuTarget("x86_64-unknown-linux-gnu", "znver4", "+avx2,+fma", 2, 256, 64);

    static List<TuningTask> tasks() {
        Tensor a = Te.placeholder("A", dev.kiln.ir.DType.FLOAT32, 16, 12);
        Tensor b = Te.placeholder("B", dev.kiln.ir.DType.FLOAT32, 12, 20);
        Tensor x = Te.placeholder("X", dev.kiln.ir.DType.FLOAT32, 8, 24);
        Tensor w = Te.placeholder("W", dev.kiln.ir.DType.FLOAT32, 24, 12);
        return List.of(
                new TuningTask(AutoSchedule.task(ComputeDAG.of(Linalg.matmul(a, b)), CPU), 2, "", "matmul"),
                new TuningTask(
                        AutoSchedule.task(ComputeDAG.of(Activation.relu(Linalg.matmul(x, w))), CPU), 1, "", "relu"));
    }

    static SchedulerResult tune(CliProgress m) {
        return new TaskScheduler(
                        tasks(),
                        TaskSchedulerOptions.builder()
                                .trials(36)
                                .measuresPerRound(12)
                                .seed(5)
                                .measurer(m)
                                .policies(RandomSearchPolicy::forTask)
                                .build())
                .tune();
    }

    @Test
    void aWrappedAsynchronousMeasurerStillOverlapsRounds() {
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        try (SleepingPoolMeasurer pool = new SleepingPoolMeasurer(CPU, 4, 5);
                CliProgress m = new CliProgress(
                        pool,
                        "net",
                        36,
                        CliProgress.Mode.LINES,
                        new PrintStream(err, true, StandardCharsets.UTF_8),
                        0)) {
            assertThat(m.asynchronous()).isTrue();
            SchedulerResult r = tune(m);
            assertThat(r.trace().overlapped()).isTrue();
            // whole rounds reach the pool through submit (the synchronous path measures CHUNK programs at a time)
            assertThat(pool.largestBatch()).isEqualTo(12).isGreaterThan(CliProgress.CHUNK);
            assertThat(r.trials()).isEqualTo(36);
            // the trials and the scheduler's re-measurements, every one counted by the progress
            assertThat(pool.measured()).isGreaterThanOrEqualTo(36);
            assertThat(m.measured()).isEqualTo(pool.measured());
            assertThat(err.toString(StandardCharsets.UTF_8)).contains(pool.measured() + " measurement(s) this run");
        }
    }
}
