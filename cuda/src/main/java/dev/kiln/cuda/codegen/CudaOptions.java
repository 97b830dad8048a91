package dev.kiln.cuda.codegen;

import java.util.List;

/**
 * Choices of CUDA code generation.
 *
 * @param fastMath          fast single-precision intrinsics ({@code __expf}, {@code rsqrtf},
 *                          {@code fminf}) and compilation with {@code --use_fast_math} (FMA
 *                          contraction, approximate division and square root, flush to zero).
 *                          Off: every operation rounds like the interpreter and the module is
 *                          compiled with {@code --fmad=false}.
 * @param vectorize         turn vectorized copy loops into {@code float2}/{@code float4} accesses
 *                          where they are provably aligned and contiguous
 * @param zeroSharedMemory  clear shared arrays when they are allocated (all threads, then a
 *                          barrier), like the interpreter clears scratch memory; off by default,
 *                          since the lowering reads only shared elements it fetched
 */
public record CudaOptions(boolean fastMath, boolean vectorize, boolean zeroSharedMemory) {

    /** Exact arithmetic, vector copies, shared memory not cleared. */
    public static CudaOptions defaults() {
        return new CudaOptions(false, true, false);
    }

    public CudaOptions withFastMath(boolean on) {
        return new CudaOptions(on, vectorize, zeroSharedMemory);
    }

    public CudaOptions withZeroSharedMemory(boolean on) {
        return new CudaOptions(fastMath, vectorize, on);
    }

    /**
     * The compiler flags the generated source needs, in the spelling NVRTC and nvcc share:
     * {@code --fmad=false} for exact arithmetic, {@code --use_fast_math} for fast math.
     */
    public List<String> compileFlags() {
        return fastMath ? List.of("--use_fast_math") : List.of("--fmad=false", "--prec-div=true", "--prec-sqrt=true");
    }
}
