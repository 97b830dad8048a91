package dev.kiln.samples.jmh;

import static dev.kiln.ir.DType.FLOAT32;
import static dev.kiln.te.Te.compute;
import static dev.kiln.te.Te.placeholder;
import static dev.kiln.te.Te.reduceAxis;
import static dev.kiln.te.Te.shape;
import static dev.kiln.te.Te.sum;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kiln.interp.Interpreter;
import dev.kiln.ir.IterVar;
import dev.kiln.ir.KilnException;
import dev.kiln.lower.LowerDefault;
import dev.kiln.runtime.NDArray;
import dev.kiln.target.Backend;
import dev.kiln.target.CompiledKernel;
import dev.kiln.target.Target;
import dev.kiln.te.ComputeDAG;
import dev.kiln.te.Tensor;
import dev.kiln.tir.PrimFunc;
import java.util.Collection;
import org.junit.jupiter.api.Test;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.RunnerException;
import org.openjdk.jmh.runner.options.Options;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;
import org.openjdk.jmh.runner.options.VerboseMode;

class MatmulBenchmarkTest {

    /** The documented sample runs under JMH (in this JVM, one short iteration), so it cannot rot. */
    @Test
    void theSampleBenchmarkRunsUnderJmh() throws RunnerException {
        Options opts = new OptionsBuilder()
                .include(MatmulBenchmark.class.getName() + ".matmul")
                .param("n", "32")
                .forks(0)
                .warmupIterations(0)
                .measurementIterations(1)
                .measurementTime(TimeValue.milliseconds(200))
                .shouldFailOnError(true)
                .verbosity(VerboseMode.SILENT)
                .build();
        Collection<RunResult> results = new Runner(opts).run();
        assertThat(results).hasSize(1);
        RunResult r = results.iterator().next();
        assertThat(r.getParams().getParam("n")).isEqualTo("32");
        assertThat(r.getPrimaryResult().getScore()).isPositive().isFinite();
    }

    /** The arguments KernelBenchmark prepares: seeded, distinct per parameter, and what the kernel computes on. */
    @Test
    void kernelInputsAreSeededAndTheKernelComputesOnThem() {
        Tensor a = placeholder("A", FLOAT32, 12, 9);
        Tensor b = placeholder("B", FLOAT32, 9, 7);
        IterVar k = reduceAxis(9, "k");
        Tensor c = compute("C", shape(12, 7), (i, j) -> sum(k, a.at(i, k).mul(b.at(k, j))));
        PrimFunc f = LowerDefault.lower("mm", ComputeDAG.of(c));
        Target cpu = Target.cpu();
        try (CompiledKernel kernel = Backend.forTarget(cpu).compile(f, cpu);
                KernelInputs in = KernelInputs.random(kernel, 7);
                KernelInputs again = KernelInputs.random(kernel, 7)) {
            assertThat(in.size()).isEqualTo(3);
            assertThat(in.arg(0).toFloatArray()).containsExactly(again.arg(0).toFloatArray());
            assertThat(in.arg(0).toFloatArray()).isNotEqualTo(in.arg(1).toFloatArray());
            in.call();
            try (NDArray expected = NDArray.allocate(FLOAT32, 12, 7)) {
                Interpreter.run(f, in.arg(0), in.arg(1), expected);
                in.arg(2).assertClose(expected, 1e-5, 1e-5);
            }
            assertThatThrownBy(() -> in.arg(3))
                    .isInstanceOf(KilnException.class)
                    .hasMessageContaining("index 3")
                    .hasMessageContaining("3 parameters");
        }
    }
}
