package dev.kiln.bench;

import dev.kiln.ir.DType;
import dev.kiln.lower.LowerDefault;
import dev.kiln.runtime.NDArray;
import dev.kiln.target.Backend;
import dev.kiln.target.CompiledKernel;
import dev.kiln.target.Target;
import dev.kiln.te.ComputeDAG;
import dev.kiln.te.Te;
import dev.kiln.te.Tensor;
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
 * The cost of calling a tiny compiled kernel (c = a + b over 16 floats) through its Panama
 * handle, next to the same work as a plain Java loop over off-heap segments.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(
        value = 1,
        jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "--add-modules=jdk.incubator.vector"})
public class CallOverheadBench {
    private NDArray a, b, c;
    private CompiledKernel kernel;

    @Setup
    public void setup() {
        Tensor x = Te.placeholder("a", DType.FLOAT32, 16);
        Tensor y = Te.placeholder("b", DType.FLOAT32, 16);
        Tensor z = Te.compute("c", Te.shape(16), i -> x.at(i).add(y.at(i)));
        kernel = Backend.forTarget(Target.cpu()).compile(LowerDefault.lower("add16", ComputeDAG.of(z)), Target.cpu());
        a = NDArray.random(DType.FLOAT32, 1, 16);
        b = NDArray.random(DType.FLOAT32, 2, 16);
        c = NDArray.allocate(DType.FLOAT32, 16);
    }

    @Benchmark
    public void kilnKernelCall() {
        kernel.call(a, b, c);
    }

    @Benchmark
    public void javaLoopOnSegments() {
        var sa = a.segment();
        var sb = b.segment();
        var sc = c.segment();
        for (long i = 0; i < 16; i++) {
            sc.setAtIndex(
                    java.lang.foreign.ValueLayout.JAVA_FLOAT,
                    i,
                    sa.getAtIndex(java.lang.foreign.ValueLayout.JAVA_FLOAT, i)
                            + sb.getAtIndex(java.lang.foreign.ValueLayout.JAVA_FLOAT, i));
        }
    }
}
