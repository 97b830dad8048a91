package dev.kiln.target;

import dev.kiln.ir.KilnException;
import java.util.Map;
import java.util.Objects;

/**
 * An NVIDIA GPU target.
 *
 * @param arch                  the compute capability, e.g. {@code sm_90}
 * @param maxThreadsPerBlock    the most threads one block may have
 * @param sharedMemPerBlock     shared memory one block may use, in bytes
 * @param warpSize              threads per warp
 */
public record CudaTarget(String arch, int maxThreadsPerBlock, int sharedMemPerBlock, int warpSize) implements Target {

    public CudaTarget {
        Objects.requireNonNull(arch, "arch");
        if (!arch.matches("sm_[0-9]+[a-z]?")) throw new KilnException("CUDA arch must look like sm_90, got '" + arch + "'");
        if (maxThreadsPerBlock < 1 || sharedMemPerBlock < 0 || warpSize < 1) {
            throw new KilnException("CUDA target limits must be positive: threads " + maxThreadsPerBlock
                    + ", shared memory " + sharedMemPerBlock + ", warp " + warpSize);
        }
    }

    /** The H200's defaults: sm_90, 1024 threads per block, 48 KiB static shared memory, warp 32. */
    public static CudaTarget h200() { return new CudaTarget("sm_90", 1024, 48 * 1024, 32); }

    @Override
    public Kind kind() { return Kind.CUDA; }

    @Override
    public String toString() {
        return "cuda -arch=" + arch + " -max-threads-per-block=" + maxThreadsPerBlock + " -shared-memory-per-block="
                + sharedMemPerBlock + " -warp-size=" + warpSize;
    }

    static CudaTarget fromOptions(String s, Map<String, String> opts) {
        TargetOptions o = new TargetOptions(s, opts);
        CudaTarget t = new CudaTarget(o.string("arch"), o.integer("max-threads-per-block"),
                o.integer("shared-memory-per-block"), o.integer("warp-size"));
        o.requireAllUsed();
        return t;
    }
}
