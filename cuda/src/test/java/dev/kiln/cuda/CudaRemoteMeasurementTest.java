package dev.kiln.cuda;

import static dev.kiln.ir.DType.FLOAT32;
import static dev.kiln.te.Te.placeholder;
import static org.assertj.core.api.Assertions.assertThat;

import dev.kiln.autoschedule.Candidate;
import dev.kiln.autoschedule.SearchTask;
import dev.kiln.autoschedule.measure.MeasureError;
import dev.kiln.autoschedule.measure.MeasureOptions;
import dev.kiln.autoschedule.measure.MeasureResult;
import dev.kiln.autoschedule.measure.RemoteMeasurement;
import dev.kiln.autoschedule.search.TargetRules;
import dev.kiln.autoschedule.tune.AutoSchedule;
import dev.kiln.nn.Linalg;
import dev.kiln.target.CudaTarget;
import dev.kiln.target.Target;
import dev.kiln.te.ComputeDAG;
import dev.kiln.te.Tensor;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * CUDA programs measured the cluster's way: the tuner's side ({@link RemoteMeasurement.Preparer}) lowers sampled GPU
 * schedules for the H200 target without a GPU, and the worker's side ({@link RemoteMeasurement.Executor}: the
 * measuring child JVM) hands them to the CUDA measurer ({@code ProgramMeasurer}), not to the backend's host calls.
 * Without a GPU the child answers each program with the driver's reason; with one, every program checks against the
 * interpreter and is timed.
 */
class CudaRemoteMeasurementTest {
    private static final CudaTarget TARGET = Target.cuda();

    @TempDir
    Path dir;

    @Test
    void theTunerLowersCudaProgramsAndTheWorkersChildMeasuresThemWithTheCudaMeasurer() throws Exception {
        Tensor a = placeholder("A", FLOAT32, 64, 48), b = placeholder("B", FLOAT32, 48, 40);
        SearchTask task = AutoSchedule.task(ComputeDAG.of(Linalg.matmul(a, b)), TARGET);
        List<Candidate> cs = TargetRules.cuda()
                .population(task, TargetRules.cuda().sketches(task))
                .sample(3, new SplittableRandom(21))
                .candidates();
        assertThat(cs).isNotEmpty();
        MeasureOptions options = MeasureOptions.defaults();
        CudaDriver.Status driver = CudaDriver.status();
        try (RemoteMeasurement.Preparer tuner = new RemoteMeasurement.Preparer(TARGET, options);
                RemoteMeasurement.Executor worker = new RemoteMeasurement.Executor(List.of(), 60)) {
            Path workload = dir.resolve("workload.bin");
            Files.write(workload, tuner.workloadBytes(task));
            for (Candidate c : cs) {
                RemoteMeasurement.Prepared p = tuner.prepare(task, c.schedule());
                assertThat(p.ok()).as("%s", p.failure()).isTrue();
                assertThat(p.program().request()).contains(TARGET.toString());
                MeasureResult r = worker.measure(p.program(), workload, 60);
                if (driver.available()) {
                    assertThat(r.ok()).as("%s", r.errorMessage()).isTrue();
                } else {
                    // the CUDA measurer was asked and said why it cannot run (a backend would have compiled first)
                    assertThat(r.error()).as("%s", r).isEqualTo(MeasureError.RUNTIME);
                    assertThat(r.errorMessage()).contains("cannot set up the measurement", driver.reason());
                }
            }
            assertThat(worker.childStarts()).isEqualTo(1);
        }
    }
}
