package dev.kiln.autoschedule.measure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kiln.autoschedule.SearchTask;
import dev.kiln.autoschedule.measure.FaultyBackend.Fault;
import dev.kiln.ir.KilnException;
import dev.kiln.schedule.Schedule;
import dev.kiln.te.ComputeDAG;
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
    static final MeasureOptions OPTIONS = MeasureOptions.defaults()
            .withRepeats(2)
            .withMinRepeatMs(0)
            .withWarmupMs(0)
            .withTimeoutSeconds(2);

    static Fixtures.EditingLowerer lowerer;
    static ProcessMeasurer serial;
    static ProcessMeasurer parallel;

    @BeforeAll
    static void start() {
        lowerer = new Fixtures.EditingLowerer();
        serial = ProcessMeasurer.builder(FaultyBackend.TARGET)
                .options(OPTIONS)
                .lowerer(lowerer)
                .buildThreads(1)
                .start();
        parallel = ProcessMeasurer.builder(FaultyBackend.TARGET)
                .options(OPTIONS)
                .lowerer(lowerer)
                .buildThreads(3)
                .start();
    }

    @AfterAll
    static void stop() throws Exception {
        for (ProcessMeasurer m : new ProcessMeasurer[] {serial, parallel}) {
            m.close();
            Fixtures.deleteTree(m.tempDir());
        }
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
        ComputeDAG dag = Fixtures.matmul(7, 5, 3);
        SearchTask task = Fixtures.task(dag, FaultyBackend.TARGET);
        Fixtures.EditingLowerer l = lowerer;
        List<Schedule> batch = List.of(
                l.fault(dag, Fault.NONE),
                l.fault(dag, Fault.COMPILE_ERROR),
                l.fault(dag, Fault.THROW_AT_RUN),
                l.fault(dag, Fault.WRONG_AT_RUN),
                l.fault(dag, Fault.SEGFAULT_AT_RUN),
                Fixtures.tiled(dag, 2, 2),
                l.fault(dag, Fault.HANG_AT_RUN),
                l.fault(dag, Fault.COMPILE_ERROR),
                Fixtures.illegal(dag),
                l.fault(dag, Fault.NONE));
        int starts = parallel.workerStarts();
        List<MeasureResult> inTurn = serial.measure(task, batch);
        List<MeasureResult> built = parallel.measure(task, batch);
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
        ComputeDAG dag = Fixtures.matmul(4, 6, 5);
        SearchTask task = Fixtures.task(dag, FaultyBackend.TARGET);
        Fixtures.EditingLowerer l = lowerer;
        // the child dies while compiling: the batch is measured again in turn, which finds the program at fault
        List<MeasureResult> crash = parallel.measure(
                task,
                List.of(
                        l.fault(dag, Fault.NONE),
                        l.fault(dag, Fault.HALT_IN_COMPILE),
                        l.fault(dag, Fault.COMPILE_ERROR),
                        Fixtures.tiled(dag, 2, 3)));
        assertThat(crash)
                .extracting(MeasureResult::error)
                .containsExactly(MeasureError.NONE, MeasureError.CRASH, MeasureError.COMPILE, MeasureError.NONE);
        assertThat(crash.get(1).errorMessage()).contains("exit status 21");
        assertThat(crash.get(2).errorMessage())
                .isEqualTo("faulty: faulty backend: function 'kiln_measured' refused on purpose");
        // a compile that never ends stalls the build: killed after the time-out, then found in turn
        List<MeasureResult> hang = parallel.measure(
                task,
                List.of(l.fault(dag, Fault.HANG_IN_COMPILE), l.fault(dag, Fault.NONE), Fixtures.tiled(dag, 2, 2)));
        assertThat(hang)
                .extracting(MeasureResult::error)
                .containsExactly(MeasureError.TIMEOUT, MeasureError.NONE, MeasureError.NONE);
        assertThat(hang.get(0).errorMessage()).contains("no result after 2.0 s");
        assertThat(hang.get(1).costsSeconds()).hasSize(2);
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
            try (ProcessMeasurer m = ProcessMeasurer.start(FaultyBackend.TARGET, OPTIONS)) {
                assertThat(m.buildThreads()).isEqualTo(1);
            }
        } finally {
            if (before == null) System.clearProperty(BuildThreads.PROPERTY);
            else System.setProperty(BuildThreads.PROPERTY, before);
        }
    }
}
