package dev.kiln.bench.onnx;

import dev.kiln.autoschedule.network.CompiledNetwork;
import dev.kiln.autoschedule.network.MemoryPlan;
import dev.kiln.jit.LlvmBackend;
import dev.kiln.jit.ParallelRuntime;
import dev.kiln.target.CpuTarget;
import java.util.ArrayList;
import java.util.List;

/**
 * The variants of {@code OnnxBench --cache-ab}: what may leave a kernel's data warmer for the next
 * one. The memory plan's reuse policy ({@link MemoryPlan.Reuse}: best fit against the block freed
 * last), and at 2+ threads the native pool's split of a parallel loop: by default 4 chunks per thread
 * taken in any order, so a thread's rows in one kernel need not be the rows it wrote in the kernel
 * before; with 1 chunk per thread each loop is cut in contiguous parts, the caller taking the first.
 */
final class CacheVariants {
    private CacheVariants() {}

    static List<CompiledNetwork.Variant> of(CompiledNetwork cn, CpuTarget target) {
        long byDefault = LlvmBackend.defaultChunksPerThread();
        CompiledNetwork.Variant built = cn.asBuilt();
        CompiledNetwork.Variant recent = cn.withMemoryPlan(MemoryPlan.Reuse.RECENT);
        List<CompiledNetwork.Variant> vs = new ArrayList<>();
        vs.add(chunks(built, target, byDefault, false));
        vs.add(chunks(recent, target, byDefault, false));
        if (target.cores() > 1) {
            vs.add(chunks(built, target, 1, true));
            vs.add(chunks(recent, target, 1, true));
        }
        return vs;
    }

    /** The variant run with {@code cpt} chunks per thread, the runtime's default restored after each run. */
    private static CompiledNetwork.Variant chunks(
            CompiledNetwork.Variant v, CpuTarget target, long cpt, boolean named) {
        long byDefault = LlvmBackend.defaultChunksPerThread();
        String name = v.name() + (named ? ", " + cpt + " chunk(s) per thread" : "");
        return CompiledNetwork.Variant.of(name, (inputs, perCall) -> {
            if (cpt == byDefault) {
                v.run(inputs, perCall);
                return;
            }
            LlvmBackend.tuneRuntimeChunks(target, ParallelRuntime.NATIVE_POOL, cpt);
            try {
                v.run(inputs, perCall);
            } finally {
                LlvmBackend.tuneRuntimeChunks(target, ParallelRuntime.NATIVE_POOL, byDefault);
            }
        });
    }
}
