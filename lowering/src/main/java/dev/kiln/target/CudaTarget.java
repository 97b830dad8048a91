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
 * @param fastMath              whether code may use the fast single-precision intrinsics
 *                              ({@code __expf}, approximate division and square root) and contract
 *                              {@code a * b + c} into one FMA. Off by default, so compiled code
 *                              rounds like the interpreter; tuned kernels turn it on for speed and
 *                              are checked with a tolerance. Written {@code -fast-math=1}.
 * @param tf32                  whether the search may run a float32 matmul on TF32 Tensor Cores
 *                              (inputs rounded to 10-bit significands, float32 sums; PyTorch's
 *                              {@code allow_tf32}). Off by default: a float32 program then keeps
 *                              float32's precision. Written {@code -tf32=1}.
 */
public record CudaTarget(
        String arch, int maxThreadsPerBlock, int sharedMemPerBlock, int warpSize, boolean fastMath, boolean tf32)
        implements Target {

    /** A target with the interpreter's rounding (no fast math, no TF32). */
    public CudaTarget(String arch, int maxThreadsPerBlock, int sharedMemPerBlock, int warpSize) {
        this(arch, maxThreadsPerBlock, sharedMemPerBlock, warpSize, false, false);
    }

    /** A target with fast math on or off and no TF32. */
    public CudaTarget(String arch, int maxThreadsPerBlock, int sharedMemPerBlock, int warpSize, boolean fastMath) {
        this(arch, maxThreadsPerBlock, sharedMemPerBlock, warpSize, fastMath, false);
    }

    public CudaTarget {
        Objects.requireNonNull(arch, "arch");
        if (!arch.matches("sm_[0-9]+[a-z]?"))
            throw new KilnException("CUDA arch must look like sm_90, got '" + arch + "'");
        if (maxThreadsPerBlock < 1 || sharedMemPerBlock < 0 || warpSize < 1) {
            throw new KilnException("CUDA target limits must be positive: threads " + maxThreadsPerBlock
                    + ", shared memory " + sharedMemPerBlock + ", warp " + warpSize);
        }
    }

    /** The H200's defaults: sm_90, 1024 threads per block, 48 KiB static shared memory, warp 32. */
    public static CudaTarget h200() {
        return new CudaTarget("sm_90", 1024, 48 * 1024, 32);
    }

    @Override
    public Kind kind() {
        return Kind.CUDA;
    }

    /** The same GPU with fast math on or off. */
    public CudaTarget withFastMath(boolean on) {
        return new CudaTarget(arch, maxThreadsPerBlock, sharedMemPerBlock, warpSize, on, tf32);
    }

    /** The same GPU with float32 matmuls on TF32 Tensor Cores allowed or not. */
    public CudaTarget withTf32(boolean on) {
        return new CudaTarget(arch, maxThreadsPerBlock, sharedMemPerBlock, warpSize, fastMath, on);
    }

    /** The compute capability as a number: 90 for {@code sm_90} and {@code sm_90a}. */
    public int computeCapability() {
        return Integer.parseInt(arch.substring(3).replaceAll("[a-z]$", ""));
    }

    @Override
    public String toString() {
        return "cuda -arch=" + arch + " -max-threads-per-block=" + maxThreadsPerBlock + " -shared-memory-per-block="
                + sharedMemPerBlock + " -warp-size=" + warpSize + (fastMath ? " -fast-math=1" : "")
                + (tf32 ? " -tf32=1" : "");
    }

    static CudaTarget fromOptions(String s, Map<String, String> opts) {
        TargetOptions o = new TargetOptions(s, opts);
        CudaTarget t = new CudaTarget(
                o.string("arch"),
                o.integer("max-threads-per-block"),
                o.integer("shared-memory-per-block"),
                o.integer("warp-size"),
                o.integer("fast-math", 0) != 0,
                o.integer("tf32", 0) != 0);
        o.requireAllUsed();
        return t;
    }
}
