package dev.kiln.autoschedule.measure;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kiln.autoschedule.SearchTask;
import dev.kiln.lower.Lowering;
import dev.kiln.schedule.Schedule;
import dev.kiln.target.Target;
import dev.kiln.te.ComputeDAG;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * {@link LocalMeasurer}: the same stages and errors as the process measurer, in this JVM, on the
 * interpreter and on the LLVM backend (with and without the cache flush).
 */
class LocalMeasurerTest {
    static final MeasureOptions OPTIONS =
            MeasureOptions.defaults().withRepeats(4).withMinRepeatMs(1).withWarmupMs(0);

    @Test
    void schedulesAreTimedOnTheInterpreterAndErrorsRecordedInProcess() {
        ComputeDAG dag = Fixtures.matmul(9, 11, 6);
        ComputeDAG smaller = Fixtures.matmul(9, 10, 6);
        SearchTask task = Fixtures.task(dag, Target.cpu());
        Fixtures.EditingLowerer lowerer = new Fixtures.EditingLowerer();
        try (LocalMeasurer m = LocalMeasurer.interpreter(OPTIONS)) {
            assertThat(m.target()).isEqualTo(Target.cpu());
            List<MeasureResult> rs = m.measure(task, List.of(Schedule.empty(dag), Fixtures.tiled(dag, 3, 4)));
            for (MeasureResult r : rs) {
                assertThat(r.ok()).as(r.toString()).isTrue();
                assertThat(r.costsSeconds()).hasSize(4);
                assertThat(r.median()).isGreaterThan(0);
            }
            Fixtures.EditingLowerer l = lowerer;
            try (LocalMeasurer edited = LocalMeasurer.of(Target.cpu(), OPTIONS, l)) {
                List<MeasureResult> errs = edited.measure(
                        task,
                        List.of(
                                Fixtures.illegal(dag),
                                l.edited(dag, Fixtures::wrongFirstElement),
                                l.edited(
                                        dag,
                                        f -> Lowering.lower(ScheduleLowerer.FUNCTION_NAME, Schedule.empty(smaller))),
                                Fixtures.threadBound(dag),
                                Schedule.empty(dag)));
                assertThat(errs)
                        .extracting(MeasureResult::error)
                        .containsExactly(
                                MeasureError.LOWER,
                                MeasureError.WRONG_RESULT,
                                MeasureError.RUNTIME,
                                MeasureError.COMPILE,
                                MeasureError.NONE);
                assertThat(errs.get(1).errorMessage()).contains("got 1234.5");
                assertThat(errs.get(3).errorMessage()).startsWith("llvm: ");
                assertThat(edited.referenceComputations()).isOne();
            }
            assertThat(m.measure(task, Fixtures.tiled(dag, 9, 11)).ok()).isTrue();
            assertThat(m.referenceComputations()).isOne();
        }
    }

    @Test
    void theLlvmBackendInProcessWithTheCacheFlushed() {
        ComputeDAG dag = Fixtures.matmul(33, 17, 40);
        SearchTask task = Fixtures.task(dag, Target.cpu());
        try (LocalMeasurer m =
                LocalMeasurer.of(Target.cpu(), OPTIONS.withFlushCache(true).withNumber(2))) {
            for (MeasureResult r : m.measure(task, List.of(Schedule.empty(dag), Fixtures.tiled(dag, 11, 17)))) {
                assertThat(r.ok()).as(r.toString()).isTrue();
                assertThat(r.costsSeconds()).hasSize(4);
                assertThat(r.mean()).isGreaterThan(0);
                assertThat(r.gflops(dag.flopCount())).isGreaterThan(0);
            }
        }
    }

    @Test
    void preparedReferencesAreComputedOnceAcrossThreadsAndServeLaterMeasurements() {
        List<ComputeDAG> dags = List.of(Fixtures.matmul(9, 7, 5), Fixtures.matmul(4, 12, 6), Fixtures.matmul(3, 3, 3));
        List<SearchTask> tasks =
                dags.stream().map(d -> Fixtures.task(d, Target.cpu())).toList();
        try (LocalMeasurer m = LocalMeasurer.interpreter(OPTIONS)) {
            m.prepare(List.of(tasks.get(0), tasks.get(1), tasks.get(2), tasks.get(0)), 2);
            assertThat(m.referenceComputations()).isEqualTo(3);
            m.prepare(tasks, 2);
            for (int i = 0; i < dags.size(); i++) {
                MeasureResult r = m.measure(tasks.get(i), Fixtures.tiled(dags.get(i), 2, 3));
                assertThat(r.ok()).as(r.toString()).isTrue();
            }
            assertThat(m.referenceComputations()).isEqualTo(3);
            // A wrong program is still caught against a prepared reference.
            Fixtures.EditingLowerer l = new Fixtures.EditingLowerer();
            try (LocalMeasurer edited = LocalMeasurer.of(Target.cpu(), OPTIONS, l)) {
                edited.prepare(tasks, 2);
                MeasureResult wrong = edited.measure(tasks.get(0), l.edited(dags.get(0), Fixtures::wrongFirstElement));
                assertThat(wrong.error()).isEqualTo(MeasureError.WRONG_RESULT);
            }
        }
    }

    @Test
    void withoutTheCheckNoReferenceIsComputedAndWrongProgramsAreTimed() {
        ComputeDAG dag = Fixtures.matmul(5, 6, 7);
        Fixtures.EditingLowerer l = new Fixtures.EditingLowerer();
        try (LocalMeasurer m = LocalMeasurer.of(Target.cpu(), OPTIONS.withCheckCorrectness(false), l)) {
            MeasureResult r = m.measure(Fixtures.task(dag, Target.cpu()), l.edited(dag, Fixtures::wrongFirstElement));
            assertThat(r.ok()).isTrue();
            assertThat(m.referenceComputations()).isZero();
        }
    }
}
