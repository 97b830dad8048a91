package dev.kiln.autoschedule;

import dev.kiln.ir.KilnException;
import dev.kiln.target.CpuTarget;
import dev.kiln.target.CudaTarget;
import dev.kiln.target.Target;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;

/**
 * What the search needs to know about the machine: the number of cores (parallelism targets and
 * the rfactor decision), the vector width and cache line in bytes, the limits of the random
 * annotation (the largest innermost tile, the longest vectorised loop) and, for CUDA, the
 * threads per block, shared and local memory per block, the warp size and the largest virtual
 * thread extent. The field order of {@link #toLogArray()} is Ansor's tuning-log order.
 *
 * @param numCores                  cores used by parallel loops
 * @param vectorUnitBytes           SIMD register width in bytes (64 with AVX-512, 32 with AVX2)
 * @param cacheLineBytes            cache line size in bytes
 * @param maxInnermostSplitFactor   the largest innermost tile size the random annotation picks (Ansor: 64;
 *                                  Kiln's reduction blocks of 128-384, {@code ReductionTileSizes}, go past it)
 * @param maxVectorizeSize          the largest extent of a vectorised (fused) loop (Ansor: 16)
 * @param maxSharedMemoryPerBlock   CUDA: shared memory per block in bytes (0 on a CPU)
 * @param maxLocalMemoryPerBlock    CUDA: local memory per block in bytes (0 on a CPU)
 * @param maxThreadsPerBlock        CUDA: threads per block (0 on a CPU)
 * @param maxVthreadExtent          CUDA: the largest virtual-thread extent (0 on a CPU)
 * @param warpSize                  CUDA: threads per warp (0 on a CPU)
 */
public record HardwareParams(
        int numCores,
        int vectorUnitBytes,
        int cacheLineBytes,
        int maxInnermostSplitFactor,
        int maxVectorizeSize,
        int maxSharedMemoryPerBlock,
        int maxLocalMemoryPerBlock,
        int maxThreadsPerBlock,
        int maxVthreadExtent,
        int warpSize) {
    /** Ansor's cap on the innermost tile size. */
    public static final int DEFAULT_MAX_INNERMOST_SPLIT_FACTOR = 64;
    /** Ansor's cap on the extent of a vectorised loop. */
    public static final int DEFAULT_MAX_VECTORIZE_SIZE = 16;

    public HardwareParams {
        positive("numCores", numCores);
        positive("vectorUnitBytes", vectorUnitBytes);
        positive("cacheLineBytes", cacheLineBytes);
        positive("maxInnermostSplitFactor", maxInnermostSplitFactor);
        positive("maxVectorizeSize", maxVectorizeSize);
        nonNegative("maxSharedMemoryPerBlock", maxSharedMemoryPerBlock);
        nonNegative("maxLocalMemoryPerBlock", maxLocalMemoryPerBlock);
        nonNegative("maxThreadsPerBlock", maxThreadsPerBlock);
        nonNegative("maxVthreadExtent", maxVthreadExtent);
        nonNegative("warpSize", warpSize);
    }

    /** A CPU with the given cores, vector width and cache line, and Ansor's annotation limits. */
    public static HardwareParams cpu(int numCores, int vectorUnitBytes, int cacheLineBytes) {
        return new HardwareParams(
                numCores,
                vectorUnitBytes,
                cacheLineBytes,
                DEFAULT_MAX_INNERMOST_SPLIT_FACTOR,
                DEFAULT_MAX_VECTORIZE_SIZE,
                0,
                0,
                0,
                0,
                0);
    }

    /**
     * This machine: {@link Runtime#availableProcessors()} cores, 64-byte vectors when
     * {@code /proc/cpuinfo} lists {@code avx512f} (else 32), 64-byte cache lines.
     */
    public static HardwareParams thisCpu() {
        return cpu(Runtime.getRuntime().availableProcessors(), hasAvx512f(Path.of("/proc/cpuinfo")) ? 64 : 32, 64);
    }

    /**
     * A CUDA device (Ansor's defaults for the CPU-side fields: 1 core, 16-byte vectors, 64-byte
     * lines); the GPU limits are the device's.
     */
    public static HardwareParams cuda(
            int maxSharedMemoryPerBlock,
            int maxLocalMemoryPerBlock,
            int maxThreadsPerBlock,
            int maxVthreadExtent,
            int warpSize) {
        positive("maxThreadsPerBlock", maxThreadsPerBlock);
        positive("warpSize", warpSize);
        return new HardwareParams(
                1,
                16,
                64,
                DEFAULT_MAX_INNERMOST_SPLIT_FACTOR,
                DEFAULT_MAX_VECTORIZE_SIZE,
                maxSharedMemoryPerBlock,
                maxLocalMemoryPerBlock,
                maxThreadsPerBlock,
                maxVthreadExtent,
                warpSize);
    }

    /**
     * The hardware parameters of a target (what TVM derives as a target's default hardware
     * parameters). A CPU's: its cores, vector width and cache line, Ansor's annotation limits. A
     * CUDA device's: its shared memory and threads per block and warp size, with Ansor's defaults
     * for what the target does not say (local memory unlimited, virtual threads up to 8).
     */
    public static HardwareParams of(Target target) {
        return switch (target) {
            case CpuTarget c -> cpu(c.cores(), c.vectorBits() / 8, c.cacheLineBytes());
            case CudaTarget g ->
                cuda(g.sharedMemPerBlock(), Integer.MAX_VALUE, g.maxThreadsPerBlock(), 8, g.warpSize());
        };
    }

    /** The same parameters with another number of cores. */
    public HardwareParams withNumCores(int cores) {
        return new HardwareParams(
                cores,
                vectorUnitBytes,
                cacheLineBytes,
                maxInnermostSplitFactor,
                maxVectorizeSize,
                maxSharedMemoryPerBlock,
                maxLocalMemoryPerBlock,
                maxThreadsPerBlock,
                maxVthreadExtent,
                warpSize);
    }

    /** The same parameters with other annotation limits. */
    public HardwareParams withAnnotationLimits(int innermostSplitFactor, int vectorizeSize) {
        return new HardwareParams(
                numCores,
                vectorUnitBytes,
                cacheLineBytes,
                innermostSplitFactor,
                vectorizeSize,
                maxSharedMemoryPerBlock,
                maxLocalMemoryPerBlock,
                maxThreadsPerBlock,
                maxVthreadExtent,
                warpSize);
    }

    /**
     * The number of architectural vector registers, derived from the vector width this machine
     * was detected with: 32 with 64-byte vectors (AVX-512: zmm0-31), 16 with narrower x86 vectors
     * (AVX2/SSE: ymm/xmm0-15). The register-tile sampling ({@code RegisterTileSizes}) sizes
     * accumulator tiles by it.
     */
    public int vectorRegisters() {
        return vectorUnitBytes >= 64 ? 32 : 16;
    }

    /** Vector lanes of an element of {@code elementBytes} bytes (at least 1). */
    public int lanes(int elementBytes) {
        return Math.max(1, vectorUnitBytes / Math.max(1, elementBytes));
    }

    /**
     * The eight numbers of Ansor's log record, in its order: cores, vector bytes, cache line,
     * shared memory, local memory, threads per block, vthread extent, warp size.
     */
    public int[] toLogArray() {
        return new int[] {
            numCores,
            vectorUnitBytes,
            cacheLineBytes,
            maxSharedMemoryPerBlock,
            maxLocalMemoryPerBlock,
            maxThreadsPerBlock,
            maxVthreadExtent,
            warpSize
        };
    }

    static boolean hasAvx512f(Path cpuinfo) {
        if (!Files.isReadable(cpuinfo)) return false;
        try (Stream<String> lines = Files.lines(cpuinfo)) {
            return lines.anyMatch(l -> l.startsWith("flags") && (" " + l + " ").contains(" avx512f "));
        } catch (IOException | java.io.UncheckedIOException e) {
            return false;
        }
    }

    private static void positive(String what, int v) {
        if (v <= 0) throw new KilnException("hardware parameter " + what + " must be positive, got " + v);
    }

    private static void nonNegative(String what, int v) {
        if (v < 0) throw new KilnException("hardware parameter " + what + " must not be negative, got " + v);
    }
}
