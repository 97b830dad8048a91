package dev.kiln.lower;

import dev.kiln.ir.KilnException;

/**
 * The limits of a GPU that the GPU passes check a program against before anything runs.
 *
 * @param maxThreadsPerBlock    the most threads one block may have (the product of the threadIdx extents)
 * @param sharedMemoryPerBlock  the bytes of shared memory one block may allocate
 * @param warpSize              threads per warp
 * @param maxVthreadExtent      the largest extent of a vthread loop (Ansor's {@code max_vthread_extent})
 */
public record GpuLimits(int maxThreadsPerBlock, long sharedMemoryPerBlock, int warpSize, int maxVthreadExtent) {
    public GpuLimits {
        if (maxThreadsPerBlock < 1 || sharedMemoryPerBlock < 0 || warpSize < 1 || maxVthreadExtent < 1) {
            throw new KilnException("GPU limits must be positive: threads per block " + maxThreadsPerBlock
                    + ", shared memory per block " + sharedMemoryPerBlock + ", warp size " + warpSize
                    + ", vthread extent " + maxVthreadExtent);
        }
    }

    /** The limits of a CUDA target, with Ansor's default vthread extent of 8. */
    public static GpuLimits of(dev.kiln.target.CudaTarget target) {
        return new GpuLimits(target.maxThreadsPerBlock(), target.sharedMemPerBlock(), target.warpSize(), 8);
    }

    /**
     * An NVIDIA H200 (sm_90): 1024 threads and 48 KiB of static shared memory per block, warps of 32, vthread up to 8.
     */
    public static GpuLimits h200() {
        return new GpuLimits(1024, 48 * 1024, 32, 8);
    }
}
