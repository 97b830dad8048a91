package dev.kiln.samples.jmh;

import dev.kiln.ir.KilnException;
import dev.kiln.runtime.NDArray;
import dev.kiln.target.CompiledKernel;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * A JMH state for timing one compiled or tuned Kiln kernel. A subclass builds the kernel in
 * {@link #kernel()} (it may read its own {@code @Param} fields, which JMH sets first); once per
 * trial this compiles it and allocates seeded random arguments ({@link KernelInputs}); a
 * {@code @Benchmark} method then calls {@link #call()}. The kernel and the arguments are closed after
 * the trial. {@link MatmulBenchmark} is the sample to copy.
 *
 * <pre>
 * &#64;State(Scope.Benchmark)
 * public class MyBenchmark extends KernelBenchmark {
 *     protected CompiledKernel kernel() { ... }      // Backend.forTarget(..).compile(..) or AutoSchedule.build(..)
 *     &#64;Benchmark public void run() { call(); }
 * }
 * </pre>
 */
@State(Scope.Benchmark)
public abstract class KernelBenchmark {
    private CompiledKernel kernel;
    private KernelInputs inputs;

    /** For subclasses, which JMH instantiates (through its generated subclass of each). */
    protected KernelBenchmark() {}

    /** Builds the kernel to time; called once per trial, after JMH has set the {@code @Param} fields. */
    protected abstract CompiledKernel kernel();

    /** The seed of the random arguments; override for other inputs. */
    protected long seed() {
        return 1;
    }

    /** Compiles the kernel and allocates its arguments (JMH calls this; not part of the timing). */
    @Setup(Level.Trial)
    public final void setUpKernel() {
        kernel = kernel();
        if (kernel == null) throw new KilnException(getClass().getSimpleName() + ".kernel() returned null");
        inputs = KernelInputs.random(kernel, seed());
    }

    /** Frees the arguments and the kernel's native code. */
    @TearDown(Level.Trial)
    public final void tearDownKernel() {
        if (inputs != null) inputs.close();
        if (kernel != null) kernel.close();
        inputs = null;
        kernel = null;
    }

    /** One call of the kernel on the prepared arguments: what a {@code @Benchmark} method times. */
    protected final void call() {
        inputs.call();
    }

    /** Argument {@code i} of the kernel (to check a result, or to set an input by hand). */
    protected final NDArray arg(int i) {
        return inputs.arg(i);
    }

    /** The compiled kernel (its {@code source()}, {@code func()}, {@code target()}). */
    protected final CompiledKernel compiled() {
        return kernel;
    }
}
