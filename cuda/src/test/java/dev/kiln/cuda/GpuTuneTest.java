package dev.kiln.cuda;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assumptions.assumeFalse;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.kiln.autoschedule.SearchTask;
import dev.kiln.autoschedule.measure.MeasureError;
import dev.kiln.autoschedule.measure.MeasureOptions;
import dev.kiln.autoschedule.measure.MeasureResult;
import dev.kiln.autoschedule.measure.Measurer;
import dev.kiln.autoschedule.measure.ScheduleLowerer;
import dev.kiln.autoschedule.tune.AutoSchedule;
import dev.kiln.autoschedule.tune.TuneOptions;
import dev.kiln.autoschedule.tune.TuneResult;
import dev.kiln.cuda.codegen.CudaCodegen;
import dev.kiln.cuda.compile.Nvcc;
import dev.kiln.cuda.compile.Nvrtc;
import dev.kiln.fixtures.GpuSchedules;
import dev.kiln.ir.KilnException;
import dev.kiln.schedule.Schedule;
import dev.kiln.target.CudaTarget;
import dev.kiln.target.Target;
import dev.kiln.te.ComputeDAG;
import dev.kiln.tir.PrimFunc;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code AutoSchedule.tune(dag, Target.cuda(), ...)} end to end without a GPU: GPU sketches,
 * random annotation, the search loop and the tuning log, with a measurer that lowers each program
 * for the H200, generates its CUDA C and runs it in the interpreter against the reference (its
 * "time" is the interpreter's, which is all a machine without a GPU can time); the best program is
 * then compiled by the CUDA backend. Without a driver, the default GPU measurer refuses to start
 * with the driver probe's reason.
 */
class GpuTuneTest {
    /** Lowers for the GPU, generates CUDA C, runs the interpreter and checks the output. */
    static final class InterpreterGpuMeasurer implements Measurer {
        private final CudaTarget target;
        int measured;

        InterpreterGpuMeasurer(CudaTarget target) {
            this.target = target;
        }

        @Override
        public Target target() {
            return target;
        }

        @Override
        public MeasureOptions options() {
            return MeasureOptions.defaults().withRemeasure(0, 0);
        } // no noise to re-measure

        @Override
        public List<MeasureResult> measure(SearchTask task, List<Schedule> schedules) {
            List<MeasureResult> out = new ArrayList<>();
            for (Schedule s : schedules) {
                measured++;
                PrimFunc f;
                try {
                    f = ScheduleLowerer.forTarget(target).lower(task, s);
                } catch (RuntimeException e) {
                    out.add(MeasureResult.failed(MeasureError.LOWER, e.getMessage(), 0, 0));
                    continue;
                }
                try {
                    CudaCodegen.generate(f);
                } catch (RuntimeException e) {
                    out.add(MeasureResult.failed(MeasureError.COMPILE, e.getMessage(), 0, 0));
                    continue;
                }
                long t0 = System.nanoTime();
                String diff = GpuTesting.compareWithDefault(task.dag(), f, 5, 1e-4);
                double t = (System.nanoTime() - t0) / 1e9;
                out.add(
                        diff == null
                                ? MeasureResult.ok(new double[] {t}, 0, t)
                                : MeasureResult.failed(MeasureError.WRONG_RESULT, diff, 0, t));
            }
            return out;
        }

        @Override
        public void close() {}
    }

    @Test
    void tuningForCudaSearchesGpuSketchesLogsAndCompilesTheBest(@TempDir Path dir) throws Exception {
        assumeTrue(
                Nvrtc.availability().available() || Nvcc.find().isPresent(),
                "no CUDA compiler: " + Nvrtc.availability());
        ComputeDAG dag = GpuSchedules.matmul(64, 48, 32);
        CudaTarget target = Target.cuda();
        InterpreterGpuMeasurer m = new InterpreterGpuMeasurer(target);
        Path log = dir.resolve("gpu.jsonl");
        TuneOptions o = TuneOptions.builder()
                .trials(12)
                .measuresPerRound(6)
                .seed(3)
                .logFile(log)
                .measurer(m)
                .progressBar(false)
                .build();
        try (TuneResult r = AutoSchedule.tune(dag, target, o)) {
            assertThat(r.trials()).isEqualTo(12);
            assertThat(r.errors()).isZero();
            assertThat(r.task().target().kind().isGpu()).isTrue();
            assertThat(r.kernel()).isInstanceOf(CudaKernel.class);
            assertThat(r.kernel().source())
                    .contains("__global__")
                    .contains("__shared__")
                    .contains("__syncthreads();");
            assertThat(r.schedule().toJavaSource())
                    .contains("\"blockIdx.x\"")
                    .contains("\"vthread\"")
                    .contains("\"threadIdx.x\"");
        }
        assertThat(m.measured).isEqualTo(12);
        assertThat(Files.readAllLines(log)).hasSize(12).allMatch(l -> l.contains("cuda -arch=sm_90"));
    }

    @Test
    void withoutADriverTheDefaultGpuMeasurerSaysWhy() {
        assumeFalse(CudaDriver.status().available(), "a CUDA driver is present: the device tests tune for real");
        KilnException e = assertThrows(
                KilnException.class,
                () -> AutoSchedule.tune(
                        GpuSchedules.matmul(16, 16, 16),
                        Target.cuda(),
                        TuneOptions.builder().trials(2).progressBar(false).build()));
        assertThat(e.getMessage()).contains("no CUDA driver (libcuda.so.1) on this machine");
    }
}
