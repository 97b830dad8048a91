package dev.kiln.autoschedule.measure;

import static dev.kiln.ir.DType.FLOAT32;
import static org.assertj.core.api.Assertions.assertThat;

import dev.kiln.autoschedule.SearchTask;
import dev.kiln.autoschedule.Workloads;
import dev.kiln.nn.Linalg;
import dev.kiln.runtime.NDArray;
import dev.kiln.schedule.Schedule;
import dev.kiln.schedule.ScheduleBuilder;
import dev.kiln.te.ComputeDAG;
import dev.kiln.te.Te;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The measurers' reference adds float32 terms in float64: the norm of a 4096 x 1024 matrix (Ansor's largest NRM
 * workload, 4M squares) taken one float32 addition after another drifts by about 0.15%, more than the 1e-3 a program
 * is checked with, so a reference built that way rejected every program that adds in another order (the suite's
 * tuning of that workload lost 80 of 100 trials to WRONG_RESULT). Here the reference matches the exact total, an
 * rfactor program passes, and the sequential float32 program, the one that drifts, is the one rejected.
 */
class WideReferenceTest {
    private static final MeasureOptions OPTIONS =
            MeasureOptions.defaults().withRepeats(2).withMinRepeatMs(0).withWarmupMs(0);

    private static ComputeDAG norm() {
        return ComputeDAG.of(Linalg.norm(Te.placeholder("A", FLOAT32, 1, 4096, 1024)));
    }

    @Test
    void theReferenceIsTheExactTotalNotTheDriftOfOneOrder() {
        SearchTask task = Workloads.task(norm());
        try (ReferenceCache cache = new ReferenceCache()) {
            Workload w = cache.get(task, OPTIONS.seed(), true);
            NDArray a = w.inputs().get(0);
            double exact = 0;
            float sequential = 0;
            for (long i = 0; i < a.numElements(); i++) {
                double x = a.getDoubleFlat(i);
                exact += x * x;
                sequential += (float) (x * x);
            }
            double ref = w.references().get(0).getDoubleFlat(0);
            assertThat(ref).isCloseTo(Math.sqrt(exact), org.assertj.core.data.Percentage.withPercentage(1e-4));
            // the drift a float32 total would have had: far beyond the check's 1e-3
            assertThat(Math.abs(Math.sqrt(sequential) - Math.sqrt(exact)) / Math.sqrt(exact))
                    .isGreaterThan(1e-3);
        }
    }

    @Test
    void aProgramThatAddsInAnotherOrderPassesAndTheDriftingOneDoesNot() {
        ComputeDAG dag = norm();
        SearchTask task = Workloads.task(dag);
        ScheduleBuilder rf = ScheduleBuilder.on(dag);
        rf.stage("norm_sumsq").split("j", 16);
        rf.stage("norm_sumsq").rfactor("j.1", 1);
        try (LocalMeasurer m = LocalMeasurer.interpreter(OPTIONS)) {
            List<MeasureResult> rs = m.measure(task, List.of(rf.build(), Schedule.empty(dag)));
            assertThat(rs.get(0).ok()).as(rs.get(0).toString()).isTrue();
            assertThat(rs.get(1).error()).as(rs.get(1).toString()).isEqualTo(MeasureError.WRONG_RESULT);
            assertThat(rs.get(1).errorMessage()).contains("float32 sums in float64");
        }
    }
}
