package dev.kiln.cuda.codegen;

import dev.kiln.ir.Buffer;
import dev.kiln.lower.GpuKernel;
import dev.kiln.tir.ThreadAxis;
import java.util.List;

/**
 * One kernel launch of a CUDA module, in program order: the {@code __global__} function's name,
 * the grid and block dimensions (the launch extents of the kernel's blockIdx and threadIdx axes,
 * see {@link GpuKernel}), and the global buffers passed to it, in parameter order (the function's
 * parameters and the module's temporaries, by base buffer).
 *
 * @param name    the kernel's name in the module ({@code extern "C"}, so the driver finds it by this name)
 * @param kernel  the kernel in the loop IR
 * @param args    the buffers it takes, in order
 * @param writes  for each argument, whether the kernel stores to it
 */
public record Launch(String name, GpuKernel kernel, List<Buffer> args, List<Boolean> writes) {
    public Launch {
        args = List.copyOf(args);
        writes = List.copyOf(writes);
    }

    /** Grid dimensions x, y, z. */
    public long[] grid() {
        return new long[] {
            kernel.extent(ThreadAxis.BLOCK_X), kernel.extent(ThreadAxis.BLOCK_Y), kernel.extent(ThreadAxis.BLOCK_Z)
        };
    }

    /**
     * Block dimensions x, y, z: the bindings' extents, x times 32 in a kernel with Tensor Core
     * nests, where each program thread along x is a warp.
     */
    public long[] block() {
        long lanes = WmmaGen.warpLevel(kernel) ? WmmaGen.LANES : 1;
        return new long[] {
            kernel.extent(ThreadAxis.THREAD_X) * lanes,
            kernel.extent(ThreadAxis.THREAD_Y),
            kernel.extent(ThreadAxis.THREAD_Z)
        };
    }

    /** Threads (lanes) per block as launched. */
    public long threadsPerBlock() {
        long[] b = block();
        return b[0] * b[1] * b[2];
    }

    @Override
    public String toString() {
        long[] gr = grid(), bl = block();
        return name + "<<<(" + gr[0] + ", " + gr[1] + ", " + gr[2] + "), (" + bl[0] + ", " + bl[1] + ", " + bl[2]
                + ")>>>(" + String.join(", ", args.stream().map(Buffer::name).toList()) + ")";
    }
}
