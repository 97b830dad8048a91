package dev.kiln.jit;

import dev.kiln.ir.KilnException;

/**
 * Code generation choices of the LLVM backend that are not part of the program or the target;
 * they are part of the compile cache key.
 *
 * @param runtime      which parallel runtime parallel loops call
 * @param maxLanes     the widest vector a vectorized loop is generated with; longer loops are
 *                     split into chunks of this many lanes plus a remainder
 * @param optimize     whether to run LLVM's {@code default<O3>} (off only to study generated code)
 * @param fpContract   whether float32/float64 {@code a * b + c} may be fused into one FMA (one
 *                     rounding instead of two; LLVM's {@code contract} flag). Off by default, so
 *                     results equal the interpreter's bit for bit; on for speed (FMA doubles the
 *                     peak of a matmul), as TVM does, when results may differ in the last bit.
 *                     The same targets let a scalar float sum reassociate ({@code reassoc}) and a
 *                     float divide multiply by the divisor's reciprocal ({@code arcp}, a bit or two
 *                     off the divide's rounding).
 */
public record JitOptions(ParallelRuntime runtime, int maxLanes, boolean optimize, boolean fpContract) {
    public JitOptions {
        if (maxLanes < 1 || maxLanes > 256) throw new KilnException("maxLanes must be in [1, 256], got " + maxLanes);
    }

    /** The defaults: the native pool (see docs/PERFORMANCE.md), 64 lanes, O3, no FMA contraction. */
    public static JitOptions defaults() {
        return new JitOptions(ParallelRuntime.NATIVE_POOL, 64, true, false);
    }

    public JitOptions withRuntime(ParallelRuntime r) {
        return new JitOptions(r, maxLanes, optimize, fpContract);
    }

    public JitOptions withMaxLanes(int n) {
        return new JitOptions(runtime, n, optimize, fpContract);
    }

    public JitOptions withOptimize(boolean o) {
        return new JitOptions(runtime, maxLanes, o, fpContract);
    }

    public JitOptions withFpContract(boolean c) {
        return new JitOptions(runtime, maxLanes, optimize, c);
    }

    /** A stable form for cache keys. */
    String key() {
        return "runtime=" + runtime + " maxLanes=" + maxLanes + " optimize=" + optimize + " fpContract=" + fpContract;
    }
}
