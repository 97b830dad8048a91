package dev.kiln.autoschedule.measure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kiln.autoschedule.measure.FaultyBackend.Fault;
import dev.kiln.ir.KilnException;
import dev.kiln.schedule.Schedule;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The parallel build of {@link ProcessMeasurer} (a batch compiled on several threads in the child, then timed one
 * program at a time) against the serial path ({@code buildThreads(1)}): the same programs give the same errors
 * with the same messages, a crash or hang while compiling or running stays with its program, and the rest of the
 * batch is measured. Programs run on {@link FaultyBackend} (the interpreter, with faults on request).
 */
@ClassPathOnly
class ParallelBuildTest {
    static FaultyChildren children;
    static ProcessMeasurer serial;
    static ProcessMeasurer parallel;

    @BeforeAll
    static void start() {
        children = new FaultyChildren(2);
        serial = children.start(1);
        parallel = children.start(3);
    }

    @AfterAll
    static void stop() throws Exception {
        children.close();
    }

    static void assertSameOutcomes(List<MeasureResult> parallel, List<MeasureResult> serial) {
        assertThat(parallel)
                .extracting(MeasureResult::error)
                .containsExactlyElementsOf(
                        serial.stream().map(MeasureResult::error).toList());
        for (int i = 0; i < serial.size(); i++) {
            MeasureResult p = parallel.get(i);
            MeasureResult s = serial.get(i);
            assertThat(p.costsSeconds()).as("program %d", i).hasSameSizeAs(s.costsSeconds());
            assertThat(p.wallSeconds()).as("program %d", i).isGreaterThan(0);
            if (s.error() == MeasureError.CRASH) {
                // the exit status and the fatal-error summary, not the pid or the crash log's path
                assertThat(p.errorMessage())
                        .as("program %d", i)
                        .contains(s.errorMessage().replaceFirst(";.*", ""));
            } else {
                assertThat(p.errorMessage()).as("program %d", i).isEqualTo(s.errorMessage());
            }
        }
    }

    @Test
    void aBatchWithFaultsWhileRunningGivesTheSerialOutcomes() {
        FaultyChildren.Workload w = children.matmul(7, 5, 3);
        List<Schedule> batch = List.of(
                w.fault(Fault.NONE),
                w.fault(Fault.COMPILE_ERROR),
                w.fault(Fault.THROW_AT_RUN),
                w.fault(Fault.WRONG_AT_RUN),
                w.fault(Fault.SEGFAULT_AT_RUN),
                w.tiled(2, 2),
                w.fault(Fault.HANG_AT_RUN),
                w.fault(Fault.COMPILE_ERROR),
                w.illegal(),
                w.fault(Fault.NONE));
        int starts = parallel.workerStarts();
        List<MeasureResult> inTurn = serial.measure(w.task(), batch);
        List<MeasureResult> built = parallel.measure(w.task(), batch);
        assertThat(inTurn)
                .extracting(MeasureResult::error)
                .containsExactly(
                        MeasureError.NONE,
                        MeasureError.COMPILE,
                        MeasureError.RUNTIME,
                        MeasureError.WRONG_RESULT,
                        MeasureError.CRASH,
                        MeasureError.NONE,
                        MeasureError.TIMEOUT,
                        MeasureError.COMPILE,
                        MeasureError.LOWER,
                        MeasureError.NONE);
        assertSameOutcomes(built, inTurn);
        for (int i : new int[] {0, 5, 9}) assertThat(built.get(i).median()).isGreaterThan(0);
        // a fresh child after the segfault and after the time-out, as in turn
        assertThat(parallel.workerStarts() - starts).isEqualTo(starts == 0 ? 3 : 2);
    }

    @Test
    void aCrashOrHangWhileCompilingStaysWithItsProgram() {
        FaultyChildren.Workload w = children.matmul(4, 6, 5);
        // the child dies while compiling: the batch is measured again in turn, which finds the program at fault
        List<MeasureResult> crash = parallel.measure(
                w.task(),
                List.of(
                        w.fault(Fault.NONE),
                        w.fault(Fault.HALT_IN_COMPILE),
                        w.fault(Fault.COMPILE_ERROR),
                        w.tiled(2, 3)));
        assertThat(crash)
                .extracting(MeasureResult::error)
                .containsExactly(MeasureError.NONE, MeasureError.CRASH, MeasureError.COMPILE, MeasureError.NONE);
        assertThat(crash.get(1).errorMessage()).contains("exit status 21");
        assertThat(crash.get(2).errorMessage())
                .isEqualTo("faulty: faulty backend: function 'kiln_measured' refused on purpose");
        // a compile that never ends stalls the build: killed after the time-out, the program still compiling is the
        // time-out (not compiled and timed out again in turn), the others measured in one fresh child
        int starts = parallel.workerStarts();
        List<MeasureResult> hang = parallel.measure(
                w.task(), List.of(w.fault(Fault.NONE), w.fault(Fault.HANG_IN_COMPILE), w.tiled(2, 2), w.tiled(1, 3)));
        assertThat(hang)
                .extracting(MeasureResult::error)
                .containsExactly(MeasureError.NONE, MeasureError.TIMEOUT, MeasureError.NONE, MeasureError.NONE);
        assertThat(hang.get(1).errorMessage()).contains("still compiling after 2.0 s");
        assertThat(hang.get(1).wallSeconds()).isBetween(2.0, 3.9);
        assertThat(hang.get(0).costsSeconds()).hasSize(2);
        assertThat(hang.get(3).costsSeconds()).hasSize(2);
        assertThat(parallel.workerStarts() - starts).isEqualTo(1);
    }

    @Test
    void theThreadCountIsAPositiveIntegerAndDefaultsToTheCores() {
        assertThat(BuildThreads.parse(null, 8)).isEqualTo(8);
        assertThat(BuildThreads.parse(" ", 6)).isEqualTo(6);
        assertThat(BuildThreads.parse("1", 8)).isEqualTo(1);
        assertThat(BuildThreads.parse(" 3 ", 8)).isEqualTo(3);
        assertThatThrownBy(() -> BuildThreads.parse("0", 8))
                .isInstanceOf(KilnException.class)
                .hasMessageContaining(BuildThreads.PROPERTY)
                .hasMessageContaining("got 0");
        assertThatThrownBy(() -> BuildThreads.parse("many", 8))
                .isInstanceOf(KilnException.class)
                .hasMessageContaining("-D" + BuildThreads.PROPERTY)
                .hasMessageContaining("'many'");
        assertThatThrownBy(() -> ProcessMeasurer.builder(FaultyBackend.TARGET).buildThreads(-1))
                .isInstanceOf(KilnException.class)
                .hasMessageContaining("build threads");
        String before = System.getProperty(BuildThreads.PROPERTY);
        try {
            System.clearProperty(BuildThreads.PROPERTY);
            assertThat(BuildThreads.fromProperty())
                    .isEqualTo(Runtime.getRuntime().availableProcessors());
            System.setProperty(BuildThreads.PROPERTY, "1");
            try (ProcessMeasurer m = ProcessMeasurer.start(FaultyBackend.TARGET, children.options())) {
                assertThat(m.buildThreads()).isEqualTo(1);
            }
        } finally {
            if (before == null) System.clearProperty(BuildThreads.PROPERTY);
            else System.setProperty(BuildThreads.PROPERTY, before);
        }
    }
}
