package dev.kiln.autoschedule.measure;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kiln.autoschedule.SearchTask;
import dev.kiln.autoschedule.measure.FaultyBackend.Fault;
import dev.kiln.schedule.Schedule;
import dev.kiln.te.ComputeDAG;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@link ProcessMeasurer} against {@link FaultyBackend}, a test backend that throws, exits, raises
 * SIGSEGV, hangs or computes wrong numbers on request: each failure becomes its error, the child
 * is restarted after each death or time-out, and the rest of the batch is measured.
 */
@ClassPathOnly
class ProcessMeasurerFaultsTest {
    static final MeasureOptions OPTIONS = MeasureOptions.defaults()
            .withRepeats(2)
            .withMinRepeatMs(0)
            .withWarmupMs(0)
            .withTimeoutSeconds(3);
    static Fixtures.EditingLowerer lowerer;
    static ProcessMeasurer measurer;

    @BeforeAll
    static void start() {
        lowerer = new Fixtures.EditingLowerer();
        measurer = ProcessMeasurer.builder(FaultyBackend.TARGET)
                .options(OPTIONS)
                .lowerer(lowerer)
                .buildThreads(1)
                .start();
    }

    @AfterAll
    static void stop() throws Exception {
        measurer.close();
        Fixtures.deleteTree(measurer.tempDir());
    }

    @Test
    void eachFaultIsRecordedWithItsReasonAndTheBatchGoesOn() {
        ComputeDAG dag = Fixtures.matmul(7, 5, 3);
        SearchTask task = Fixtures.task(dag, FaultyBackend.TARGET);
        int starts = measurer.workerStarts();
        List<Schedule> batch = List.of(
                lowerer.fault(dag, Fault.NONE),
                lowerer.fault(dag, Fault.COMPILE_ERROR),
                lowerer.fault(dag, Fault.THROW_AT_RUN),
                lowerer.fault(dag, Fault.WRONG_AT_RUN),
                lowerer.fault(dag, Fault.EXIT_AT_RUN),
                lowerer.fault(dag, Fault.NONE),
                lowerer.fault(dag, Fault.SEGFAULT_AT_RUN),
                lowerer.fault(dag, Fault.HANG_AT_RUN),
                lowerer.fault(dag, Fault.HALT_IN_COMPILE),
                Fixtures.tiled(dag, 2, 2),
                Fixtures.illegal(dag));
        List<MeasureResult> rs = measurer.measure(task, batch);
        assertThat(rs)
                .extracting(MeasureResult::error)
                .containsExactly(
                        MeasureError.NONE,
                        MeasureError.COMPILE,
                        MeasureError.RUNTIME,
                        MeasureError.WRONG_RESULT,
                        MeasureError.CRASH,
                        MeasureError.NONE,
                        MeasureError.CRASH,
                        MeasureError.TIMEOUT,
                        MeasureError.CRASH,
                        MeasureError.NONE,
                        MeasureError.LOWER);
        assertThat(rs.get(1).errorMessage())
                .isEqualTo("faulty: faulty backend: function 'kiln_measured' refused on purpose");
        assertThat(rs.get(2).errorMessage()).isEqualTo("IllegalStateException: faulty kernel threw on purpose");
        assertThat(rs.get(3).errorMessage()).contains("output 'matmul'").contains("1 of 35 elements differ");
        assertThat(rs.get(4).errorMessage()).contains("exit status 13");
        assertThat(rs.get(6).errorMessage()).contains("SIGSEGV");
        assertThat(rs.get(7).errorMessage()).contains("no result after 3.0 s").contains("killed");
        assertThat(rs.get(8).errorMessage()).contains("exit status 21");
        for (int i : new int[] {0, 5, 9}) {
            assertThat(rs.get(i).costsSeconds()).hasSize(2);
            assertThat(rs.get(i).median()).isGreaterThan(0);
        }
        // a fresh child after the exit, the segfault, the time-out and the halt; none for the last, unlowerable one
        assertThat(measurer.workerStarts() - starts).isEqualTo(starts == 0 ? 5 : 4);
    }

    @Test
    void aHangingChildIsKilled() throws Exception {
        ComputeDAG dag = Fixtures.matmul(3, 4, 5);
        SearchTask task = Fixtures.task(dag, FaultyBackend.TARGET);
        assertThat(measurer.measure(task, lowerer.fault(dag, Fault.NONE)).ok()).isTrue();
        long pid = measurer.workerPid().orElseThrow();
        MeasureResult r = measurer.measure(task, lowerer.fault(dag, Fault.HANG_AT_RUN));
        assertThat(r.error()).isEqualTo(MeasureError.TIMEOUT);
        assertThat(measurer.workerPid()).isEmpty();
        var h = ProcessHandle.of(pid);
        if (h.isPresent()) h.get().onExit().get(10, TimeUnit.SECONDS);
        assertThat(ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false))
                .isFalse();
        assertThat(measurer.measure(task, lowerer.fault(dag, Fault.NONE)).ok()).isTrue();
    }
}
