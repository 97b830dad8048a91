package dev.kiln.samples.jmh;

import static dev.kiln.ir.DType.FLOAT32;
import static dev.kiln.te.Te.compute;
import static dev.kiln.te.Te.placeholder;
import static dev.kiln.te.Te.reduceAxis;
import static dev.kiln.te.Te.shape;
import static dev.kiln.te.Te.sum;

import dev.kiln.Kiln;
import dev.kiln.autoschedule.tune.AutoSchedule;
import dev.kiln.ir.IterVar;
import dev.kiln.target.CompiledKernel;
import dev.kiln.target.Target;
import dev.kiln.te.Tensor;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The sample to copy: a JMH benchmark of a user's kernel, an n x n x n float32 matmul. With no
 * {@code log} it times the default (untuned) program; with {@code -p log=tuning.jsonl} it times the
 * best program of that tuning log ({@code AutoSchedule.build}). Run it with
 * {@code ./kiln jmh MatmulBenchmark -p n=512 -p log=tuning.jsonl}.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = "--enable-native-access=ALL-UNNAMED")
public class MatmulBenchmark extends KernelBenchmark {
    /** JMH makes one per trial and sets the {@code @Param} fields. */
    public MatmulBenchmark() {}

    /** Matrix size. */
    @Param("256")
    public int n;

    /** A tuning log to take the best program from; empty for the default lowering. */
    @Param("")
    public String log;

    @Override
    protected CompiledKernel kernel() {
        Tensor a = placeholder("A", FLOAT32, n, n);
        Tensor b = placeholder("B", FLOAT32, n, n);
        IterVar k = reduceAxis(n, "k");
        Tensor c = compute("C", shape(n, n), (i, j) -> sum(k, a.at(i, k).mul(b.at(k, j))));
        if (!log.isEmpty()) return AutoSchedule.build(c, Target.CPU, Path.of(log));
        return Kiln.compile(c, Target.CPU);
    }

    /** One matmul of the prepared n x n inputs. */
    @Benchmark
    public void matmul() {
        call();
    }
}
