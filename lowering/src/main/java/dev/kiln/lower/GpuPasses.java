package dev.kiln.lower;

import dev.kiln.schedule.Schedule;
import dev.kiln.tir.PrimFunc;
import java.util.List;
import java.util.Set;

/**
 * The GPU passes of the lowering pipeline (the phase {@code gpu} of {@link Lowering#pipeline}),
 * in order:
 * <ol>
 *   <li>{@code verify-thread-bindings}: refuse a schedule whose bindings make no valid GPU
 *       program; from it on, the verifier checks the bindings after every pass;
 *   <li>{@code plan-memory-scopes}: hoist shared allocations to the block, check local and global
 *       placement and the shared-memory limit;
 *   <li>{@code inject-barriers}: synchronise the threads around shared-memory traffic.
 * </ol>
 * The pipeline ends with the phase {@code gpu-check}: {@code verify-gpu-program}, the
 * thread-binding check again.
 */
public final class GpuPasses {
    private GpuPasses() {}

    /** The three GPU passes, in order. */
    public static List<Lowering.Pass> passes(GpuLimits limits) {
        return List.of(
                new Lowering.Pass(
                        "verify-thread-bindings",
                        f -> VerifyThreadBindings.apply(f, limits),
                        Set.of(VerifyWellFormed.Rule.THREAD_BINDINGS)),
                new Lowering.Pass("plan-memory-scopes", f -> PlanMemoryScopes.apply(f, limits)),
                new Lowering.Pass("inject-barriers", InjectBarriers::apply));
    }

    /** The passes of {@link Lowering#gpuPipeline}, in order. */
    public static List<Lowering.Pass> pipeline(GpuLimits limits) {
        return Lowering.gpuPipeline(limits).passes();
    }

    /** Runs the three GPU passes on a lowered program (for callers that ran the other passes themselves). */
    public static PrimFunc apply(PrimFunc f, GpuLimits limits) {
        for (Lowering.Pass p : passes(limits)) f = p.run().apply(f);
        return f;
    }

    /** Lowers a GPU schedule through {@link Lowering#gpuPipeline}, like {@link Lowering#lower} does for any target. */
    public static PrimFunc lower(String name, Schedule schedule, GpuLimits limits, Lowering.Options options) {
        return Lowering.gpuPipeline(limits).lower(name, schedule, options);
    }
}
