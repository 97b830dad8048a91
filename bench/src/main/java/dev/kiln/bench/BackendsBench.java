package dev.kiln.bench;

import dev.kiln.ir.DType;
import dev.kiln.lower.Lowering;
import dev.kiln.nn.Conv;
import dev.kiln.runtime.NDArray;
import dev.kiln.samples.MatmulSchedules;
import dev.kiln.schedule.Schedule;
import dev.kiln.schedule.ScheduleBuilder;
import dev.kiln.target.Backend;
import dev.kiln.target.CompiledKernel;
import dev.kiln.target.CpuTarget;
import dev.kiln.target.Target;
import dev.kiln.te.ComputeDAG;
import dev.kiln.te.Te;
import dev.kiln.te.Tensor;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The pure-JVM backend (ASM + Vector API) and the LLVM backend on the same schedules, side by
 * side: GEMM 1024 with the hand-written tiled schedule, and the ResNet conv2d layer (NHWC
 * 56x56x64 -> 64, 3x3, pad 1) with padding inlined, rows parallel and output channels vectorized.
 * Both backends compile with exact floating-point semantics (no FMA contraction) so they run the
 * same arithmetic.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(
        value = 1,
        jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "--add-modules=jdk.incubator.vector"})
public class BackendsBench {
    @Param({"gemm1024", "conv2d"})
    public String workload;

    @Param({"llvm", "jvm"})
    public String backend;

    private CompiledKernel kernel;
    private NDArray[] args;

    @Setup
    public void setup() {
        Schedule s = workload.equals("gemm1024")
                ? MatmulSchedules.tiled(MatmulBench.matmul(1024), MatmulSchedules.Tiles.avx512())
                : conv2dSchedule();
        CpuTarget target = backend.equals("llvm") ? Target.cpu() : Target.jvm();
        kernel = Backend.forTarget(target).compile(Lowering.lower(workload, s), target);
        List<NDArray> a = new ArrayList<>();
        int seed = 1;
        for (Tensor t : s.dag().arguments()) {
            a.add(
                    t.isPlaceholder()
                            ? NDArray.random(t.dtype(), seed++, t.shape().toArray())
                            : NDArray.allocate(t.dtype(), t.shape().toArray()));
        }
        args = a.toArray(NDArray[]::new);
    }

    static Schedule conv2dSchedule() {
        Tensor data = Te.placeholder("data", DType.FLOAT32, 1, 56, 56, 64);
        Tensor weight = Te.placeholder("weight", DType.FLOAT32, 3, 3, 64, 64);
        ComputeDAG dag = ComputeDAG.of(Conv.conv2dNhwc(data, weight, 1, 1));
        ScheduleBuilder b = ScheduleBuilder.on(dag);
        b.stage("pad").computeInline();
        var conv = b.stage(dag.outputs().get(0));
        var loops = conv.loops();
        // n, h, w, co, then the reduction rh, rw, rc: put the reduction outside the channel vector.
        conv.reorder(loops.get(0), loops.get(1), loops.get(2), loops.get(4), loops.get(5), loops.get(6), loops.get(3));
        conv.parallel(loops.get(1));
        conv.vectorize(loops.get(3));
        return b.build();
    }

    @Benchmark
    public void run() {
        kernel.call(args);
    }

    @TearDown
    public void tearDown() throws Exception {
        kernel.close();
        for (NDArray a : args) a.close();
    }
}
