package dev.kiln.autoschedule.tune;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kiln.autoschedule.SearchTask;
import dev.kiln.autoschedule.Workloads;
import dev.kiln.autoschedule.log.LogRecord;
import dev.kiln.autoschedule.log.TuningLog;
import dev.kiln.autoschedule.progress.TuneProgress;
import dev.kiln.autoschedule.search.FakeMeasurer;
import dev.kiln.autoschedule.search.RandomSearchPolicy;
import dev.kiln.autoschedule.search.SearchLimits;
import dev.kiln.autoschedule.search.SearchLoop;
import dev.kiln.autoschedule.search.StopReason;
import dev.kiln.ir.DType;
import dev.kiln.ir.KilnException;
import dev.kiln.runtime.NDArray;
import dev.kiln.target.CompiledKernel;
import dev.kiln.target.CpuTarget;
import dev.kiln.target.Target;
import dev.kiln.te.ComputeDAG;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The facade with a fake measurer and the real LLVM backend: the best program is compiled and
 * computes the right numbers, a log builds without searching, and records of other targets are
 * never applied and always named.
 */
class AutoScheduleTest {
    static final CpuTarget HOST = Target.cpu();
    /** The same workload measured on another machine. */
    static final CpuTarget OTHER = new CpuTarget("x86_64-unknown-linux-gnu", "skylake", "+avx2", 64, 256, 64);

    @TempDir
    Path dir;

    static TuneOptions.Builder options(FakeMeasurer m) {
        return TuneOptions.builder().measurer(m).progressBar(false).seed(7);
    }

    /** Runs the program on seeded random inputs and checks C = A B against plain Java loops (float32, rtol 1e-5). */
    static void checkMatmul(CompiledKernel k, int n, int m, int kk, long seed) {
        NDArray a = NDArray.random(DType.FLOAT32, seed, n, kk), b = NDArray.random(DType.FLOAT32, seed + 1, kk, m);
        NDArray c = NDArray.allocate(DType.FLOAT32, n, m);
        k.call(a, b, c);
        float[] fa = a.toFloatArray(), fb = b.toFloatArray(), fc = c.toFloatArray();
        double maxAbs = 0;
        for (float v : fc) maxAbs = Math.max(maxAbs, Math.abs(v));
        assertThat(maxAbs).isGreaterThan(0.1);
        for (int i = 0; i < n; i++) {
            for (int j = 0; j < m; j++) {
                double s = 0;
                for (int p = 0; p < kk; p++) s += (double) fa[i * kk + p] * fb[p * m + j];
                assertThat((double) fc[i * m + j])
                        .as("C[%d,%d]", i, j)
                        .isCloseTo(s, org.assertj.core.data.Offset.offset(1e-5 * (1 + Math.abs(s))));
            }
        }
    }

    @Test
    void tuneCompilesTheFastestLoggedProgramAndItComputesTheProduct() {
        Path file = dir.resolve("matmul.jsonl");
        ComputeDAG dag = Workloads.matmul(24, 20, 36);
        FakeMeasurer m = new FakeMeasurer(HOST, 4, new AtomicLong(), 0);
        try (TuneResult r = AutoSchedule.tune(
                dag,
                HOST,
                options(m).trials(13).measuresPerRound(5).logFile(file).build())) {
            assertThat(r.trials()).isEqualTo(13);
            assertThat(r.newTrials()).isEqualTo(13);
            assertThat(r.stopReason()).isEqualTo(StopReason.TRIAL_BUDGET);
            assertThat(r.logFile()).contains(file);
            TuningLog log = TuningLog.open(file);
            LogRecord best = log.best(dag.workloadKey(), HOST.toString()).orElseThrow();
            assertThat(r.schedule()).isEqualTo(best.schedule(dag));
            assertThat(r.seconds()).isEqualTo(best.seconds()).isEqualTo(FakeMeasurer.secondsOf(r.schedule()));
            assertThat(r.gflops())
                    .isCloseTo(dag.flopCount() / best.seconds() / 1e9, org.assertj.core.data.Offset.offset(1e-9));
            assertThat(r.errors()).isEqualTo((int)
                    log.records().stream().filter(x -> !x.isValid()).count());
            assertThat(r.summary()).contains("GFLOP/s").contains("of 13").contains("TRIAL_BUDGET");
            assertThat(r.kernel().target()).isEqualTo(HOST);
            checkMatmul(r.kernel(), 24, 20, 36, 101);
        }
    }

    @Test
    void anIntegerKernelReportsGopPerSecond() {
        dev.kiln.te.Tensor a = dev.kiln.te.Te.placeholder("A", DType.INT32, 12, 10);
        dev.kiln.te.Tensor b = dev.kiln.te.Te.placeholder("B", DType.INT32, 10, 8);
        ComputeDAG dag = ComputeDAG.of(dev.kiln.nn.Linalg.matmul(a, b, false, false, DType.INT32));
        assertThat(dag.rateUnit()).isEqualTo("GOP/s");
        FakeMeasurer m = new FakeMeasurer(HOST);
        try (TuneResult r = AutoSchedule.tune(
                dag,
                HOST,
                options(m).trials(4).logFile(dir.resolve("int.jsonl")).build())) {
            assertThat(r.rateUnit()).isEqualTo("GOP/s");
            assertThat(r.summary()).contains("GOP/s").doesNotContain("GFLOP");
            assertThat(r.gflops()).isPositive();
            NDArray na = NDArray.random(DType.INT32, 3, 12, 10), nb = NDArray.random(DType.INT32, 4, 10, 8);
            NDArray c = NDArray.allocate(DType.INT32, 12, 8);
            r.kernel().call(na, nb, c);
            for (int i = 0; i < 12; i++) {
                for (int j = 0; j < 8; j++) {
                    long s = 0;
                    for (int p = 0; p < 10; p++) s += na.getLong(i, p) * nb.getLong(p, j);
                    assertThat(c.getLong(i, j)).as("C[%d,%d]", i, j).isEqualTo(s);
                }
            }
        }
    }

    @Test
    void buildAppliesTheBestLoggedProgramWithoutSearching() {
        Path file = dir.resolve("build.jsonl");
        FakeMeasurer m = new FakeMeasurer(HOST);
        try (TuneResult r = AutoSchedule.tune(
                Workloads.matmul(17, 9, 33),
                HOST,
                options(m).trials(6).logFile(file).build())) {
            // A DAG built anew is the same workload: the log applies to it.
            ComputeDAG again = Workloads.matmul(17, 9, 33);
            assertThat(AutoSchedule.bestSchedule(again, HOST, file).steps())
                    .isEqualTo(r.schedule().steps());
            try (CompiledKernel k = AutoSchedule.build(again, HOST, file)) {
                checkMatmul(k, 17, 9, 33, 5);
            }
        }
        // Tuning again with no trials left measures nothing and gives the same program.
        FakeMeasurer idle = new FakeMeasurer(HOST);
        try (TuneResult r = AutoSchedule.tune(
                Workloads.matmul(17, 9, 33),
                HOST,
                options(idle).trials(6).logFile(file).build())) {
            assertThat(r.newTrials()).isZero();
            assertThat(idle.measured()).isEmpty();
            assertThat(r.schedule().steps())
                    .isEqualTo(AutoSchedule.bestSchedule(Workloads.matmul(17, 9, 33), HOST, file)
                            .steps());
        }
    }

    @Test
    void buildSaysWhyThereIsNothingToApply() {
        ComputeDAG dag = Workloads.matmul(8, 8, 8);
        assertThatThrownBy(() -> AutoSchedule.build(dag, HOST, dir.resolve("missing.jsonl")))
                .isInstanceOf(KilnException.class)
                .hasMessageContaining("missing.jsonl")
                .hasMessageContaining("does not exist");

        // A log with records of this workload only on another machine: refused, and that machine named.
        Path other = dir.resolve("other.jsonl");
        measureOn(OTHER, dag, other, 4, 0);
        assertThatThrownBy(() -> AutoSchedule.build(dag, HOST, other))
                .isInstanceOf(KilnException.class)
                .hasMessageContaining("no record of workload " + dag.workloadKey() + " on target '" + HOST + "'")
                .hasMessageContaining("4 for '" + OTHER + "'")
                .hasMessageContaining("not applied");

        // A log whose every measurement of the task failed.
        Path failed = dir.resolve("failed.jsonl");
        measureOn(HOST, dag, failed, 3, 1);
        assertThatThrownBy(() -> AutoSchedule.build(dag, HOST, failed))
                .hasMessageContaining("none is valid")
                .hasMessageContaining("COMPILE=3");
    }

    @Test
    void tuningNextToAnotherTargetsRecordsLeavesThemAloneAndSaysSo() {
        ComputeDAG dag = Workloads.matmul(16, 12, 20);
        Path file = dir.resolve("shared.jsonl");
        measureOn(OTHER, dag, file, 5, 0);
        FakeMeasurer m = new FakeMeasurer(HOST);
        try (TuneResult r =
                AutoSchedule.tune(dag, HOST, options(m).trials(4).logFile(file).build())) {
            assertThat(r.outcome().restoredTrials()).isZero();
            assertThat(r.trials()).isEqualTo(4);
            assertThat(m.measured()).hasSize(4);
            assertThat(r.notes())
                    .anySatisfy(n -> assertThat(n).contains("not applied").contains("5 for '" + OTHER + "'"));
            assertThat(r.summary()).contains("note: Records of this workload for other targets are not applied");
        }
        TuningLog log = TuningLog.open(file);
        assertThat(log.records(dag.workloadKey(), OTHER.toString())).hasSize(5);
        assertThat(log.records(dag.workloadKey(), HOST.toString())).hasSize(4);
    }

    @Test
    void aRunWithoutAValidProgramThrowsWithTheErrors() {
        FakeMeasurer alwaysFails = new FakeMeasurer(HOST, 1, new AtomicLong(), 0);
        assertThatThrownBy(() -> AutoSchedule.tune(
                        Workloads.matmul(8, 8, 8),
                        HOST,
                        options(alwaysFails).trials(5).build()))
                .isInstanceOf(KilnException.class)
                .hasMessageContaining("no valid program")
                .hasMessageContaining("in 5 trial(s)")
                .hasMessageContaining("COMPILE=5")
                .hasMessageContaining("first COMPILE: fake compile error");
        assertThatThrownBy(() -> AutoSchedule.tune(
                        Workloads.matmul(8, 8, 8),
                        HOST,
                        options(alwaysFails).trials(0).build()))
                .hasMessageContaining("the trial budget is 0");
    }

    @Test
    void cpuAndCudaTasksTakeTheirHardwareFromTheTarget() {
        SearchTask gpu = AutoSchedule.task(Workloads.matmul(8, 8, 8), Target.cuda());
        assertThat(gpu.target()).isEqualTo(Target.cuda());
        assertThat(gpu.target().kind().isGpu()).isTrue();
        assertThat(gpu.targetDescription()).isEqualTo(Target.cuda().toString());
        SearchTask t = AutoSchedule.task(Workloads.matmul(8, 8, 8), OTHER);
        assertThat(t.target()).isEqualTo(OTHER);
        assertThat(t.targetDescription()).isEqualTo(OTHER.toString());
        assertThat(t.hardware().toLogArray()).containsExactly(64, 32, 64, 0, 0, 0, 0, 0);
        assertThat(AutoSchedule.hardware(Target.cuda()).toLogArray())
                .containsExactly(1, 16, 64, 48 * 1024, Integer.MAX_VALUE, 1024, 8, 32);
    }

    @Test
    void optionsAreCheckedWhenSet() {
        assertThatThrownBy(() -> TuneOptions.builder().trials(-1)).hasMessageContaining("trials");
        assertThatThrownBy(() -> TuneOptions.builder().measuresPerRound(0)).hasMessageContaining("measuresPerRound");
        assertThatThrownBy(() -> TuneOptions.builder().earlyStopping(-2)).hasMessageContaining("earlyStopping");
        assertThatThrownBy(() -> TuneOptions.builder().timeBudget(Duration.ofSeconds(-1)))
                .hasMessageContaining("time budget");
        TuneOptions o = TuneOptions.builder()
                .trials(9)
                .timeBudget(Duration.ofMinutes(2))
                .earlyStopping(3)
                .build();
        assertThat(o.toBuilder().build()).isEqualTo(o);
        assertThat(o.limits()).isEqualTo(new SearchLimits(9, 64, Duration.ofMinutes(2), 3));
        assertThat(TuneOptions.defaults().trials()).isEqualTo(200);
    }

    /** Measures {@code n} programs of {@code dag} for {@code target} with the fake into {@code file} (no compile). */
    static void measureOn(CpuTarget target, ComputeDAG dag, Path file, int n, int errorEvery) {
        SearchTask task = AutoSchedule.task(dag, target);
        try (TuningLog log = TuningLog.open(file)) {
            new SearchLoop(
                            task,
                            RandomSearchPolicy.cpu(task, 1),
                            new FakeMeasurer(target, errorEvery, new AtomicLong(), 0),
                            log,
                            new SearchLimits(n, n, Duration.ZERO, 0),
                            TuneProgress.none())
                    .run();
        }
    }
}
