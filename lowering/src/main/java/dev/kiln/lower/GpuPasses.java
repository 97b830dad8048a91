package dev.kiln.lower;

import dev.kiln.schedule.Schedule;
import dev.kiln.schedule.ScheduleLowering;
import dev.kiln.tir.PrimFunc;
import java.util.ArrayList;
import java.util.List;

/**
 * The GPU passes of the lowering pipeline and where they go in it. They run right after the
 * first simplification, while buffers still have their n-d shapes and before loop partitioning,
 * unrolling and flattening multiply the code, so a bad schedule fails fast:
 * <ol>
 *   <li>{@code verify-thread-bindings}: refuse a schedule whose bindings make no valid GPU program;
 *   <li>{@code plan-memory-scopes}: hoist shared allocations to the block, check local and global
 *       placement and the shared-memory limit;
 *   <li>{@code inject-barriers}: synchronise the threads around shared-memory traffic.
 * </ol>
 * The pipeline ends with {@code verify-gpu-program}, the thread-binding check again, which makes
 * sure the later passes kept every barrier where all threads of its block reach it.
 */
public final class GpuPasses {
    private GpuPasses() {}

    /** The three GPU passes, in order. */
    public static List<Lowering.Pass> passes(GpuLimits limits) {
        return List.of(
                new Lowering.Pass("verify-thread-bindings", f -> VerifyThreadBindings.apply(f, limits)),
                new Lowering.Pass("plan-memory-scopes", f -> PlanMemoryScopes.apply(f, limits)),
                new Lowering.Pass("inject-barriers", InjectBarriers::apply));
    }

    /** {@link Lowering#passes()} with the GPU passes after its first simplify and the final check at the end. */
    public static List<Lowering.Pass> pipeline(GpuLimits limits) {
        List<Lowering.Pass> out = new ArrayList<>();
        boolean inserted = false;
        for (Lowering.Pass p : Lowering.passes()) {
            out.add(p);
            if (!inserted && p.name().equals("simplify")) {
                out.addAll(passes(limits));
                inserted = true;
            }
        }
        if (!inserted) out.addAll(0, passes(limits));
        out.add(new Lowering.Pass("verify-gpu-program", f -> VerifyThreadBindings.apply(f, limits)));
        return List.copyOf(out);
    }

    /** Runs the three GPU passes on a lowered program (for callers that ran the other passes themselves). */
    public static PrimFunc apply(PrimFunc f, GpuLimits limits) {
        for (Lowering.Pass p : passes(limits)) f = p.run().apply(f);
        return f;
    }

    /** Lowers a GPU schedule through {@link #pipeline}, like {@link Lowering#lower} does for a CPU. */
    public static PrimFunc lower(String name, Schedule schedule, GpuLimits limits, Lowering.Options options) {
        PrimFunc f = ScheduleLowering.lower(name, schedule.replay());
        if (options.dump() != null) options.dump().accept("schedule-to-loops", f);
        for (Lowering.Pass p : pipeline(limits)) {
            f = p.run().apply(f);
            if (options.dump() != null) options.dump().accept(p.name(), f);
        }
        return f;
    }
}
