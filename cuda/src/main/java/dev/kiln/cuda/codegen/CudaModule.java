package dev.kiln.cuda.codegen;

import dev.kiln.ir.Buffer;
import dev.kiln.tir.PrimFunc;
import java.util.List;

/**
 * The CUDA C of one loop program and how the host runs it: allocate the temporaries (global
 * buffers the program allocates between kernels, cleared to zero like the interpreter's scratch
 * memory), then launch the kernels in order, each on its arguments.
 *
 * @param func            the program
 * @param source          the CUDA C: every kernel, {@code extern "C" __global__}
 * @param launches        the kernel launches, in program order
 * @param temporaries     global buffers the host allocates for one call (base buffers)
 * @param usesErrorFlag   whether the module defines {@code kiln_error} (set by a division by zero),
 *                        which the host must read and reset after the launches
 * @param options         how it was generated; {@link CudaOptions#compileFlags()} must be used to compile it
 */
public record CudaModule(
        PrimFunc func,
        String source,
        List<Launch> launches,
        List<Buffer> temporaries,
        boolean usesErrorFlag,
        CudaOptions options) {
    public CudaModule {
        launches = List.copyOf(launches);
        temporaries = List.copyOf(temporaries);
    }

    /** The name of the device variable a division by zero sets. */
    public static final String ERROR_FLAG = "kiln_error";
}
