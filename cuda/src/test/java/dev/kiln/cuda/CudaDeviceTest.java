package dev.kiln.cuda;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.kiln.autoschedule.SearchTask;
import dev.kiln.autoschedule.measure.MeasureError;
import dev.kiln.autoschedule.measure.MeasureOptions;
import dev.kiln.autoschedule.measure.MeasureResult;
import dev.kiln.cuda.codegen.CudaOptions;
import dev.kiln.fixtures.GpuSchedules;
import dev.kiln.fuzz.RandomComputations;
import dev.kiln.interp.Interpreter;
import dev.kiln.ir.DType;
import dev.kiln.ir.KilnException;
import dev.kiln.runtime.Comparison;
import dev.kiln.runtime.NDArray;
import dev.kiln.schedule.Schedule;
import dev.kiln.schedule.SimpleGpuSchedule;
import dev.kiln.target.CudaTarget;
import dev.kiln.te.ComputeDAG;
import dev.kiln.te.Te;
import dev.kiln.te.Tensor;
import dev.kiln.tir.PrimFunc;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Kernels on a real GPU against the interpreter running the same program (so code generation is
 * checked, not the schedule): the operator library, every data type, the hand-written tiled
 * schedules, random computations, fast math with a tolerance, the division-by-zero report, and
 * the GPU measurer. Skipped, with the driver probe's reason, on machines without a CUDA driver
 * and device; scripts/gpu-check.sh runs them on a GPU machine.
 *
 * <p>Tolerances: exact arithmetic rounds like the interpreter, except that CUDA's and Java's
 * double-precision exp/log/tanh/erf/pow may differ in the last bit, which can move a float32
 * result by one unit (rtol 1e-6) and, rarely, a float16 or bfloat16 result by one of theirs.
 */
class CudaDeviceTest {
    private static CudaTarget target;

    /** Per test, so that each one is reported skipped with the reason (a class-level assumption reports none). */
    @BeforeEach
    void requireGpu() {
        CudaDriver.Status s = CudaDriver.status();
        assumeTrue(s.available(), "no GPU here: " + s);
        if (target == null) {
            target = CudaBackend.deviceTarget();
            System.out.println("GPU: " + CudaDevice.first() + ", " + s + ", target " + target);
        }
    }

    static double tolerance(DType t) {
        return switch (t) {
            case FLOAT16 -> 1e-3;
            case BFLOAT16 -> 8e-3;
            case FLOAT32 -> 1e-6;
            default -> 1e-12;
        };
    }

    /** Null if the GPU computes what the interpreter computes with the same program, else a report. */
    static String gpuVersusInterpreter(PrimFunc f, ComputeDAG dag, CudaTarget t, long seed, double extraTol) {
        List<NDArray> in = GpuTesting.inputs(dag, seed);
        List<NDArray> expected = GpuTesting.run(f, dag, in);
        List<NDArray> actual = new ArrayList<>();
        for (Tensor o : dag.outputs())
            actual.add(NDArray.allocate(o.dtype(), o.shape().toArray()).fillRandom(seed ^ 0x55));
        List<NDArray> args = new ArrayList<>(in);
        args.addAll(actual);
        try (CudaKernel k = new CudaBackend().compile(f, t)) {
            k.call(args.toArray(NDArray[]::new));
        }
        for (int o = 0; o < expected.size(); o++) {
            double tol = Math.max(tolerance(expected.get(o).dtype()), extraTol);
            Comparison c = actual.get(o).compareTo(expected.get(o), tol, tol);
            if (!c.ok()) return "output " + o + ": " + c.report();
        }
        return null;
    }

    @Test
    void operatorLibraryMatchesTheInterpreter() {
        List<String> failures = new ArrayList<>();
        long seed = 500;
        for (OpLibrary.Case c : OpLibrary.all()) {
            PrimFunc f = GpuTesting.lower(c.name(), SimpleGpuSchedule.of(c.dag(), 64));
            String diff = gpuVersusInterpreter(f, c.dag(), target, seed++, 0);
            if (diff != null) failures.add(c.name() + ": " + diff);
        }
        assertThat(failures).isEmpty();
    }

    @Test
    void everyDataTypeMatchesTheInterpreter() {
        List<String> failures = new ArrayList<>();
        long seed = 600;
        for (ComputeDAG dag : DtypeCoverageTest.programs()) {
            PrimFunc f = GpuTesting.lower(dag.outputs().getFirst().name(), SimpleGpuSchedule.of(dag, 8));
            String diff = gpuVersusInterpreter(f, dag, target, seed++, 0);
            if (diff != null) failures.add(dag.outputs().getFirst().name() + ": " + diff);
        }
        assertThat(failures).isEmpty();
    }

    @Test
    void handWrittenTiledSchedulesMatchTheInterpreter() {
        List<String> failures = new ArrayList<>();
        long seed = 700;
        for (HandScheduleCudaTest.Case c : HandScheduleCudaTest.cases()) {
            PrimFunc f = GpuTesting.lower(c.name(), c.schedule());
            String diff = gpuVersusInterpreter(f, c.dag(), target, seed++, 0);
            if (diff != null) failures.add(c.name() + ": " + diff);
            String fast = gpuVersusInterpreter(f, c.dag(), target.withFastMath(true), seed++, 1e-4);
            if (fast != null) failures.add(c.name() + " (fast math): " + fast);
        }
        assertThat(failures).isEmpty();
    }

    @Test
    void randomComputationsMatchTheInterpreter() {
        List<String> failures = new ArrayList<>();
        int ran = 0;
        for (int i = 0; i < 80; i++) {
            SplittableRandom rng = new SplittableRandom(0xC0DAL + i);
            ComputeDAG dag = RandomComputations.generate(rng);
            Schedule s;
            try {
                s = SimpleGpuSchedule.of(dag, 1 + rng.nextInt(128));
            } catch (KilnException rank0) {
                continue;
            }
            ran++;
            String diff = gpuVersusInterpreter(GpuTesting.lower("random" + i, s), dag, target, i, 0);
            if (diff != null) failures.add("case " + i + ": " + diff + "\n" + dag);
        }
        assertThat(ran).isGreaterThan(40);
        assertThat(failures).isEmpty();
    }

    @Test
    void randomlyScheduledProgramsMatchTheInterpreter() {
        List<String> failures = new ArrayList<>();
        for (int c = 0; c < RandomGpuProgramsTest.CASES; c++) {
            SplittableRandom rng = new SplittableRandom(0x6b75L + c);
            ComputeDAG dag = RandomComputations.generate(rng);
            Schedule s = RandomGpuProgramsTest.gpuVersion(
                    dag, dev.kiln.fuzz.RandomSchedules.generate(dag, rng, false).schedule(), rng);
            PrimFunc f;
            try {
                f = GpuTesting.lower("random_gpu_" + c, s);
            } catch (KilnException refused) {
                continue;
            }
            String diff = gpuVersusInterpreter(f, dag, target, c, 0);
            if (diff != null) failures.add("case " + c + ": " + diff);
        }
        assertThat(failures).isEmpty();
    }

    @Test
    void divisionByZeroInAKernelIsReported() {
        Tensor x = Te.placeholder("x", DType.INT32, 64), y = Te.placeholder("y", DType.INT32, 64);
        ComputeDAG dag =
                ComputeDAG.of(Te.compute("q", Te.shape(64), i -> x.at(i).floordiv(y.at(i))));
        PrimFunc f = GpuTesting.lower("divzero", SimpleGpuSchedule.of(dag, 32));
        try (CudaKernel k = new CudaBackend().compile(f, target);
                NDArray a = NDArray.random(DType.INT32, 1, 64);
                NDArray b = NDArray.allocate(DType.INT32, 64);
                NDArray q = NDArray.allocate(DType.INT32, 64)) {
            for (int i = 0; i < 64; i++) b.setLong(i % 5 == 0 ? 0 : i % 7 - 3, i);
            KilnException e = assertThrows(KilnException.class, () -> k.call(a, b, q));
            assertThat(e.getMessage()).contains("division by zero");
            for (int i = 0; i < 64; i++) b.setLong(i % 7 == 3 ? 1 : i % 7 - 3, i);
            k.call(a, b, q); // the flag was cleared: a good run succeeds
            NDArray ref = NDArray.allocate(DType.INT32, 64);
            Interpreter.run(f, a, b, ref);
            q.assertClose(ref, 0, 0);
        }
    }

    @Test
    void measurerTimesTiledMatmulsAndRefusesProgramsOverTheLimits() {
        ComputeDAG dag = GpuSchedules.matmul(512, 512, 512);
        Schedule good = GpuSchedules.multiLevelTiling(
                dag,
                "C",
                List.of("i", "j"),
                List.of("k"),
                List.of("A", "B"),
                new GpuSchedules.Tiles(new int[][] {{1, 8, 2, 4}, {1, 16, 1, 4}}, new int[][] {{4, 2}}));
        // 64 x 32 threads per block: more than 1024
        Schedule tooManyThreads = GpuSchedules.multiLevelTiling(
                dag,
                "C",
                List.of("i", "j"),
                List.of("k"),
                List.of("A", "B"),
                new GpuSchedules.Tiles(new int[][] {{1, 64, 1, 1}, {1, 32, 1, 1}}, new int[][] {{4, 2}}));
        SearchTask task = SearchTask.of(dag, target);
        try (CudaMeasurer m =
                CudaMeasurer.start(target, MeasureOptions.defaults().withRepeats(3))) {
            List<MeasureResult> r = m.measure(task, List.of(good, tooManyThreads));
            assertThat(r.get(0).ok()).as(r.get(0).toString()).isTrue();
            assertThat(r.get(0).gflops(dag.flopCount())).isGreaterThan(10);
            assertThat(r.get(1).error()).isEqualTo(MeasureError.LOWER);
            assertThat(r.get(1).errorMessage()).contains("threads per block");
            System.out.printf("matmul 512: %.1f GFLOP/s on %s%n", r.get(0).gflops(dag.flopCount()), m.device());
        }
    }

    @Test
    void fastMathOptionReachesTheCompiledModule() {
        OpLibrary.Case c = OpLibrary.all().stream()
                .filter(x -> x.name().equals("softmax"))
                .findFirst()
                .orElseThrow();
        PrimFunc f = GpuTesting.lower("softmax_fast", SimpleGpuSchedule.of(c.dag(), 32));
        try (CudaKernel k =
                new CudaBackend().compile(f, target, CudaOptions.defaults().withFastMath(true))) {
            assertThat(k.source()).contains("__expf(");
        }
        assertThat(gpuVersusInterpreter(f, c.dag(), target.withFastMath(true), 9, 1e-5))
                .isNull();
    }
}
