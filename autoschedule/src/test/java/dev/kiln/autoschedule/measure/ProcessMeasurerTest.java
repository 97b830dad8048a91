package dev.kiln.autoschedule.measure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kiln.autoschedule.Candidate;
import dev.kiln.autoschedule.SearchTask;
import dev.kiln.autoschedule.Workloads;
import dev.kiln.autoschedule.search.TargetRules;
import dev.kiln.ir.KilnException;
import dev.kiln.lower.Lowering;
import dev.kiln.schedule.Schedule;
import dev.kiln.target.CpuTarget;
import dev.kiln.target.Target;
import dev.kiln.te.ComputeDAG;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@link ProcessMeasurer} on the LLVM backend, with one child JVM shared by the class (restarted
 * only by the crash the tests cause): times of real schedules, every kind of error on purpose with
 * the batch going on, the restart after a segfault in generated code, and the reference computed
 * once per workload.
 */
class ProcessMeasurerTest {
    static final CpuTarget TARGET = Target.cpu();
    static final MeasureOptions OPTIONS = MeasureOptions.defaults()
            .withRepeats(3)
            .withMinRepeatMs(1)
            .withWarmupMs(5)
            .withTimeoutSeconds(120);
    static Fixtures.EditingLowerer lowerer;
    static ProcessMeasurer measurer;

    @BeforeAll
    static void start() {
        lowerer = new Fixtures.EditingLowerer();
        measurer = ProcessMeasurer.builder(TARGET)
                .options(OPTIONS)
                .lowerer(lowerer)
                .start();
    }

    @AfterAll
    static void stop() throws Exception {
        var pid = measurer.workerPid();
        measurer.close();
        if (pid.isPresent()) {
            var h = ProcessHandle.of(pid.getAsLong());
            if (h.isPresent()) h.get().onExit().get(10, TimeUnit.SECONDS);
        }
        Fixtures.deleteTree(measurer.tempDir());
    }

    @Test
    void timesScheduledMatmulsOnTheLlvmBackend() {
        ComputeDAG dag = Fixtures.matmul(48, 40, 24);
        SearchTask task = Fixtures.task(dag, TARGET);
        List<Schedule> batch = List.of(Schedule.empty(dag), Fixtures.tiled(dag, 8, 8), Fixtures.tiled(dag, 6, 5));
        long before = System.currentTimeMillis();
        List<MeasureResult> rs = measurer.measure(task, batch);
        long after = System.currentTimeMillis();
        assertThat(rs).hasSize(3);
        for (MeasureResult r : rs) {
            assertThat(r.error()).as(r.toString()).isEqualTo(MeasureError.NONE);
            assertThat(r.errorMessage()).isEmpty();
            double[] c = r.costsSeconds();
            assertThat(c).hasSize(3);
            for (double x : c) assertThat(x).isGreaterThan(0);
            assertThat(r.median())
                    .isBetween(
                            Arrays.stream(c).min().orElseThrow(),
                            Arrays.stream(c).max().orElseThrow());
            assertThat(r.gflops(dag.flopCount())).isGreaterThan(0);
            assertThat(r.compileSeconds()).isGreaterThanOrEqualTo(0);
            // in turn a program's wall time holds its compile; compiled in parallel, its share of the batch's build
            if (measurer.buildThreads() == 1) assertThat(r.wallSeconds()).isGreaterThan(r.compileSeconds());
            else assertThat(r.wallSeconds()).isGreaterThan(0);
            assertThat(r.timestampMillis()).isBetween(before, after);
        }
        // either way the wall times add up to no more than the batch took
        assertThat(rs.stream().mapToDouble(MeasureResult::wallSeconds).sum())
                .isLessThanOrEqualTo((after - before) / 1e3 + 0.01);
        assertThat(measurer.workerPid()).isPresent();
    }

    @Test
    void aProgramTenTimesSlowerThanTheFastestOfItsWorkloadIsTimedOnce() {
        ComputeDAG dag = Fixtures.matmul(64, 72, 56);
        SearchTask task = Fixtures.task(dag, TARGET);
        // The default program run 2000 times over: the same output, hundreds of times slower than a tiled one.
        java.util.function.UnaryOperator<dev.kiln.tir.PrimFunc> repeat = f -> f.withBody(dev.kiln.tir.For.serial(
                new dev.kiln.ir.Var("rep"), dev.kiln.ir.IntImm.i32(0), dev.kiln.ir.IntImm.i32(2000), f.body()));
        MeasureResult slowFirst = measurer.measure(task, lowerer.edited(dag, repeat));
        assertThat(slowFirst.ok()).as(slowFirst.toString()).isTrue();
        assertThat(slowFirst.costsSeconds())
                .as("nothing of this workload timed before: in full")
                .hasSize(3);
        MeasureResult fast = measurer.measure(task, Fixtures.tiled(dag, 8, 8));
        assertThat(fast.costsSeconds()).hasSize(3);
        double bar = Math.max(
                SlowPrograms.FLOOR_SECONDS,
                SlowPrograms.RATIO * Arrays.stream(fast.costsSeconds()).min().orElseThrow());
        assertThat(Arrays.stream(slowFirst.costsSeconds()).min().orElseThrow())
                .as("the premise: the repeated program is over the bar")
                .isGreaterThan(bar);
        MeasureResult slowAgain = measurer.measure(task, lowerer.edited(dag, repeat));
        assertThat(slowAgain.ok()).as(slowAgain.toString()).isTrue();
        assertThat(slowAgain.costsSeconds())
                .as("over 10x the fastest: timed once")
                .hasSize(1);
        assertThat(slowAgain.costsSeconds()[0]).isGreaterThan(bar);
    }

    @Test
    void sampledCandidatesRunCorrectly() {
        for (ComputeDAG dag : List.of(Workloads.matmul(24, 20, 36), Workloads.conv2dNhwcRelu(1, 7, 7, 4, 8, 3))) {
            SearchTask task = Fixtures.task(dag, TARGET);
            List<Candidate> candidates = TargetRules.cpu()
                    .population(task, TargetRules.cpu().sketches(task))
                    .sample(6, new SplittableRandom(5))
                    .candidates();
            assertThat(candidates).hasSize(6);
            List<MeasureResult> rs = measurer.measureCandidates(task, candidates);
            assertThat(rs)
                    .hasSize(6)
                    .allSatisfy(r -> assertThat(r.error()).as(r.toString()).isEqualTo(MeasureError.NONE));
        }
    }

    @Test
    void everyErrorIsRecordedAndTheBatchGoesOn() {
        ComputeDAG dag = Fixtures.matmul(16, 12, 10);
        ComputeDAG smaller = Fixtures.matmul(15, 12, 10);
        SearchTask task = Fixtures.task(dag, TARGET);
        assertThat(measurer.measure(task, Schedule.empty(dag)).ok()).isTrue();
        int starts = measurer.workerStarts();
        long pid = measurer.workerPid().orElseThrow();
        List<Schedule> batch = List.of(
                Fixtures.illegal(dag),
                Fixtures.threadBound(dag),
                lowerer.edited(dag, Fixtures::wrongFirstElement),
                lowerer.edited(dag, f -> Lowering.lower(ScheduleLowerer.FUNCTION_NAME, Schedule.empty(smaller))),
                lowerer.edited(dag, Fixtures::storeOutOfBounds),
                Fixtures.tiled(dag, 4, 4));
        List<MeasureResult> rs = measurer.measure(task, batch);
        assertThat(rs)
                .extracting(MeasureResult::error)
                .containsExactly(
                        MeasureError.LOWER,
                        MeasureError.COMPILE,
                        MeasureError.WRONG_RESULT,
                        MeasureError.RUNTIME,
                        MeasureError.CRASH,
                        MeasureError.NONE);
        assertThat(rs.get(0).errorMessage()).contains("99");
        assertThat(rs.get(1).errorMessage()).startsWith("llvm: ").contains("threadIdx.x");
        assertThat(rs.get(2).errorMessage()).contains("output 'matmul'").contains("1234.5");
        assertThat(rs.get(3).errorMessage()).contains("float32[15, 10]").contains("float32[16, 10]");
        assertThat(rs.get(4).errorMessage())
                .contains("SIGSEGV")
                .contains("problematic frame")
                .contains("crash log");
        for (MeasureResult r : rs.subList(0, 5)) {
            assertThat(r.costsSeconds()).isEmpty();
            assertThat(r.median()).isEqualTo(MeasureResult.FAILED_COST);
            assertThat(r.gflops(dag.flopCount())).isZero();
        }
        assertThat(Arrays.stream(rs.get(5).costsSeconds()).min().orElseThrow()).isGreaterThan(0);
        assertThat(measurer.workerStarts()).as("one restart, after the crash").isEqualTo(starts + 1);
        assertThat(measurer.workerPid().orElseThrow()).isNotEqualTo(pid);
        assertThat(ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false))
                .isFalse();
    }

    @Test
    void theReferenceIsComputedOncePerWorkload() {
        ComputeDAG dag = Fixtures.matmul(20, 9, 7);
        int before = measurer.referenceComputations();
        SearchTask task = Fixtures.task(dag, TARGET);
        assertThat(measurer.measure(task, List.of(Schedule.empty(dag), Fixtures.tiled(dag, 4, 3))))
                .allSatisfy(r -> assertThat(r.ok()).as(r.toString()).isTrue());
        assertThat(measurer.measure(task, Fixtures.tiled(dag, 5, 9)).ok()).isTrue();
        // the same computation built again is the same workload
        ComputeDAG again = Fixtures.matmul(20, 9, 7);
        assertThat(measurer.measure(Fixtures.task(again, TARGET), Schedule.empty(again))
                        .ok())
                .isTrue();
        assertThat(measurer.referenceComputations()).isEqualTo(before + 1);
        ComputeDAG other = Fixtures.matmul(21, 9, 7);
        assertThat(measurer.measure(Fixtures.task(other, TARGET), Schedule.empty(other))
                        .ok())
                .isTrue();
        assertThat(measurer.referenceComputations()).isEqualTo(before + 2);
    }

    @Test
    void misuseThrows() {
        ComputeDAG dag = Fixtures.matmul(8, 8, 8);
        ComputeDAG other = Fixtures.matmul(8, 8, 9);
        SearchTask task = Fixtures.task(dag, TARGET);
        assertThatThrownBy(() -> measurer.measure(task, List.of(Schedule.empty(dag), Schedule.empty(other))))
                .isInstanceOf(KilnException.class)
                .hasMessageContaining("schedule 1")
                .hasMessageContaining(other.workloadKey());
        SearchTask elsewhere = Fixtures.task(dag, TARGET.withCores(TARGET.cores() + 1));
        assertThatThrownBy(() -> measurer.measure(elsewhere, Schedule.empty(dag)))
                .isInstanceOf(KilnException.class)
                .hasMessageContaining("this measurer measures on");
        ProcessMeasurer closed = ProcessMeasurer.start(TARGET, OPTIONS);
        closed.close();
        assertThatThrownBy(() -> closed.measure(task, Schedule.empty(dag)))
                .isInstanceOf(KilnException.class)
                .hasMessageContaining("closed");
        assertThat(closed.workerStarts()).isZero();
        assertThat(closed.tempDir()).doesNotExist();
    }
}
