package dev.kiln.autoschedule.measure;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kiln.autoschedule.measure.FaultyBackend.Fault;
import dev.kiln.schedule.Schedule;
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
    static FaultyChildren children;
    static ProcessMeasurer measurer;

    @BeforeAll
    static void start() {
        children = new FaultyChildren(3);
        measurer = children.start(1);
    }

    @AfterAll
    static void stop() throws Exception {
        children.close();
    }

    @Test
    void eachFaultIsRecordedWithItsReasonAndTheBatchGoesOn() {
        FaultyChildren.Workload w = children.matmul(7, 5, 3);
        int starts = measurer.workerStarts();
        List<Schedule> batch = List.of(
                w.fault(Fault.NONE),
                w.fault(Fault.COMPILE_ERROR),
                w.fault(Fault.THROW_AT_RUN),
                w.fault(Fault.WRONG_AT_RUN),
                w.fault(Fault.EXIT_AT_RUN),
                w.fault(Fault.NONE),
                w.fault(Fault.SEGFAULT_AT_RUN),
                w.fault(Fault.HANG_AT_RUN),
                w.fault(Fault.HALT_IN_COMPILE),
                w.tiled(2, 2),
                w.illegal());
        List<MeasureResult> rs = measurer.measure(w.task(), batch);
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
        FaultyChildren.Workload w = children.matmul(3, 4, 5);
        assertThat(measurer.measure(w.task(), w.fault(Fault.NONE)).ok()).isTrue();
        long pid = measurer.workerPid().orElseThrow();
        MeasureResult r = measurer.measure(w.task(), w.fault(Fault.HANG_AT_RUN));
        assertThat(r.error()).isEqualTo(MeasureError.TIMEOUT);
        assertThat(measurer.workerPid()).isEmpty();
        var h = ProcessHandle.of(pid);
        if (h.isPresent()) h.get().onExit().get(10, TimeUnit.SECONDS);
        assertThat(ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false))
                .isFalse();
        assertThat(measurer.measure(w.task(), w.fault(Fault.NONE)).ok()).isTrue();
    }
}
