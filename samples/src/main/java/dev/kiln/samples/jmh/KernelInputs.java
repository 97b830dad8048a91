package dev.kiln.samples.jmh;

import dev.kiln.ir.Buffer;
import dev.kiln.ir.KilnException;
import dev.kiln.runtime.NDArray;
import dev.kiln.target.CompiledKernel;
import java.util.List;

/**
 * Arguments for a compiled kernel: one {@link NDArray} per parameter of its function, in order,
 * with the parameter's dtype and shape, filled with seeded random values (parameter {@code i} from
 * seed {@code seed + i}, so inputs differ from each other and are the same in every run). Outputs
 * are filled too; the kernel overwrites them. Closing frees the arrays, not the kernel.
 */
public final class KernelInputs implements AutoCloseable {
    private final CompiledKernel kernel;
    private final NDArray[] args;

    private KernelInputs(CompiledKernel kernel, NDArray[] args) {
        this.kernel = kernel;
        this.args = args;
    }

    /** Allocates and fills the arguments of {@code kernel}. */
    public static KernelInputs random(CompiledKernel kernel, long seed) {
        if (kernel == null) throw new KilnException("KernelInputs.random: kernel is null");
        List<Buffer> params = kernel.func().params();
        NDArray[] args = new NDArray[params.size()];
        try {
            for (int i = 0; i < args.length; i++) {
                args[i] = NDArray.allocate(params.get(i)).fillRandom(seed + i);
            }
        } catch (RuntimeException e) {
            for (NDArray a : args) {
                if (a != null) a.close();
            }
            throw e;
        }
        return new KernelInputs(kernel, args);
    }

    /** Runs the kernel once on these arguments. */
    public void call() {
        kernel.call(args);
    }

    /** Argument {@code i} (the function's parameter {@code i}: inputs first, then outputs). */
    public NDArray arg(int i) {
        if (i < 0 || i >= args.length) {
            throw new KilnException("KernelInputs.arg: index " + i + " is outside the kernel's " + args.length
                    + " parameters (" + kernel.func().name() + ")");
        }
        return args[i];
    }

    /** How many arguments the kernel takes. */
    public int size() {
        return args.length;
    }

    @Override
    public void close() {
        for (NDArray a : args) a.close();
    }
}
