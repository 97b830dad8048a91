package dev.kiln.bench;

import dev.kiln.jit.LlvmBackend;
import dev.kiln.lower.Lowering;
import dev.kiln.samples.MatmulSchedules;
import dev.kiln.schedule.Schedule;
import dev.kiln.target.CpuTarget;
import dev.kiln.target.Target;
import dev.kiln.tir.PrimFunc;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Compile latency of the LLVM backend (O3 + ORC link) for the hand-scheduled 1024 matmul, the
 * lowering of its schedule, and a compile-cache hit, side by side.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 2, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(
        value = 1,
        jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "--add-modules=jdk.incubator.vector"})
public class CompileLatencyBench {
    private Schedule schedule;
    private PrimFunc func;
    private CpuTarget target;
    private final LlvmBackend backend = new LlvmBackend();

    @Setup
    public void setup() {
        schedule = MatmulSchedules.tiled(MatmulBench.matmul(1024), MatmulSchedules.Tiles.avx512());
        func = Lowering.lower("matmul", schedule);
        target = ((CpuTarget) Target.cpu()).withFastMath(true);
    }

    @Benchmark
    public Object lowerSchedule() {
        return Lowering.lower("matmul", schedule);
    }

    @Benchmark
    public Object compileUncached() {
        LlvmBackend.clearCache();
        var k = backend.compile(func, target);
        k.close();
        return k;
    }

    @Benchmark
    public Object compileCacheHit() {
        var k = backend.compile(func, target);
        k.close();
        return k;
    }
}
