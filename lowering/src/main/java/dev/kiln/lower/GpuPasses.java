package dev.kiln.lower;

import dev.kiln.tir.PrimFunc;
import java.util.List;

/**
 * The GPU passes of the lowering pipeline, in order, for a target's limits. They run after the
 * schedule has become loops and been simplified, and before storage flattening, unrolling and
 * the other backend passes (which must keep {@link dev.kiln.tir.Barrier}s where they are):
 * <ol>
 *   <li>{@code verify-thread-bindings}: refuse a schedule whose bindings make no valid GPU program;
 *   <li>{@code plan-memory-scopes}: hoist shared allocations to the block, check local and global
 *       placement and the shared-memory limit;
 *   <li>{@code inject-barriers}: synchronise the threads around shared-memory traffic;
 *   <li>{@code verify-barriers}: the thread-binding check again, which also checks every barrier
 *       is reached by all threads of its block.
 * </ol>
 */
public final class GpuPasses {
    private GpuPasses() {}

    public static List<Lowering.Pass> passes(GpuLimits limits) {
        return List.of(
                new Lowering.Pass("verify-thread-bindings", f -> VerifyThreadBindings.apply(f, limits)),
                new Lowering.Pass("plan-memory-scopes", f -> PlanMemoryScopes.apply(f, limits)),
                new Lowering.Pass("inject-barriers", InjectBarriers::apply),
                new Lowering.Pass("verify-barriers", f -> VerifyThreadBindings.apply(f, limits)));
    }

    /** Runs {@link #passes} on {@code f}. */
    public static PrimFunc apply(PrimFunc f, GpuLimits limits) {
        for (Lowering.Pass p : passes(limits)) f = p.run().apply(f);
        return f;
    }
}
