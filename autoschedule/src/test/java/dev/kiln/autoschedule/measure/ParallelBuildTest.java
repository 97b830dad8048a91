package dev.kiln.autoschedule.measure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kiln.autoschedule.measure.FaultyBackend.Fault;
import dev.kiln.ir.KilnException;
import dev.kiln.schedule.Schedule;
import dev.kiln.te.ComputeDAG;
import java.util.List;
import java.util.function.Function;
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
            .withTimeoutSeconds(3);

    /** Measures the batch that {@code batch} makes (from a fresh lowerer) with a fresh measurer of {@code threads}. */
    static List<MeasureResult> measure(
            int threads, ComputeDAG dag, Function<Fixtures.EditingLowerer, List<Schedule>> batch) throws Exception {
        Fixtures.EditingLowerer lowerer = new Fixtures.EditingLowerer();
        ProcessMeasurer m = ProcessMeasurer.builder(FaultyBackend.TARGET)
                .options(OPTIONS)
                .lowerer(lowerer)
                .buildThreads(threads)
                .start();
        try {
            assertThat(m.buildThreads()).isEqualTo(threads);
            return m.measure(Fixtures.task(dag, FaultyBackend.TARGET), batch.apply(lowerer));
        } finally {
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
    void aBatchWithFaultsWhileRunningGivesTheSerialOutcomes() throws Exception {
        ComputeDAG dag = Fixtures.matmul(7, 5, 3);
        Function<Fixtures.EditingLowerer, List<Schedule>> batch = l -> List.of(
                l.fault(dag, Fault.NONE),
                l.fault(dag, Fault.COMPILE_ERROR),
                l.fault(dag, Fault.THROW_AT_RUN),
                l.fault(dag, Fault.WRONG_AT_RUN),
                l.fault(dag, Fault.EXIT_AT_RUN),
                Fixtures.tiled(dag, 2, 2),
                l.fault(dag, Fault.SEGFAULT_AT_RUN),
                l.fault(dag, Fault.HANG_AT_RUN),
                l.fault(dag, Fault.COMPILE_ERROR),
                Fixtures.illegal(dag),
                l.fault(dag, Fault.NONE));
        List<MeasureResult> serial = measure(1, dag, batch);
        List<MeasureResult> parallel = measure(3, dag, batch);
        assertThat(serial)
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
                        MeasureError.COMPILE,
                        MeasureError.LOWER,
                        MeasureError.NONE);
        assertSameOutcomes(parallel, serial);
        for (int i : new int[] {0, 5, 10}) assertThat(parallel.get(i).median()).isGreaterThan(0);
    }

    @Test
    void aCrashOrHangWhileCompilingStaysWithItsProgram() throws Exception {
        ComputeDAG dag = Fixtures.matmul(4, 6, 5);
        Function<Fixtures.EditingLowerer, List<Schedule>> crash = l -> List.of(
                l.fault(dag, Fault.NONE),
                l.fault(dag, Fault.HALT_IN_COMPILE),
                l.fault(dag, Fault.COMPILE_ERROR),
                Fixtures.tiled(dag, 2, 3));
        List<MeasureResult> serial = measure(1, dag, crash);
        assertThat(serial)
                .extracting(MeasureResult::error)
                .containsExactly(MeasureError.NONE, MeasureError.CRASH, MeasureError.COMPILE, MeasureError.NONE);
        assertSameOutcomes(measure(2, dag, crash), serial);
        Function<Fixtures.EditingLowerer, List<Schedule>> hang =
                l -> List.of(l.fault(dag, Fault.HANG_IN_COMPILE), l.fault(dag, Fault.NONE), Fixtures.tiled(dag, 2, 2));
        List<MeasureResult> parallel = measure(2, dag, hang);
        assertThat(parallel)
                .extracting(MeasureResult::error)
                .containsExactly(MeasureError.TIMEOUT, MeasureError.NONE, MeasureError.NONE);
        assertThat(parallel.get(0).errorMessage()).contains("no result after 3.0 s");
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
