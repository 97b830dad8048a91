package dev.kiln.target;

import dev.kiln.ir.KilnException;
import dev.kiln.tir.PrimFunc;
import java.util.ArrayList;
import java.util.List;
import java.util.ServiceLoader;

/**
 * A code generator for some kinds of {@link Target}: the service provider interface that the
 * LLVM (module jit) and CUDA backends implement. Implementations register themselves in
 * {@code META-INF/services/dev.kiln.target.Backend} and are found with {@link ServiceLoader}, so
 * the scheduler and the tuner only ever see this interface.
 */
public interface Backend {

    /** A short name for messages and logs ("llvm", "cuda"). */
    String name();

    /** Whether this backend can compile for {@code target}. */
    boolean supports(Target target);

    /** Compiles {@code func} for {@code target}; throws {@link KilnException} with context on failure. */
    CompiledKernel compile(PrimFunc func, Target target);

    /**
     * The tensor intrinsics (names of {@code dev.kiln.schedule.TensorIntrinsics}) this backend
     * implements for {@code target}, the target's features permitting; the search offers only these.
     */
    default java.util.Set<String> intrinsics(Target target) {
        return java.util.Set.of();
    }

    /**
     * The parallel runtime that this backend's kernels for {@code target} run their parallel loops on,
     * to hold its threads awake across a run of kernels ({@link WorkerPool}); {@link WorkerPool#NONE}
     * by default.
     */
    default WorkerPool workerPool(Target target) {
        return WorkerPool.NONE;
    }

    /**
     * How this backend evicts memory from every core's caches on {@code target} ({@link CacheEviction}), or empty
     * when it cannot (the default); the caller then says how it flushes instead.
     */
    default java.util.Optional<CacheEviction> cacheEviction(Target target) {
        return java.util.Optional.empty();
    }

    /** The backends on the class path, in service-loader order. */
    static List<Backend> available() {
        List<Backend> out = new ArrayList<>();
        for (Backend b : ServiceLoader.load(Backend.class)) out.add(b);
        return out;
    }

    /**
     * The first backend on the class path that supports {@code target}. Throws, naming the target
     * and every backend found, when none does: there is never a silent fallback.
     */
    static Backend forTarget(Target target) {
        List<Backend> all = available();
        for (Backend b : all) if (b.supports(target)) return b;
        throw new KilnException("no backend supports target '" + target + "'; backends found: "
                + (all.isEmpty()
                        ? "none (add kiln-jit or kiln-cuda to the class path)"
                        : all.stream().map(Backend::name).toList()));
    }
}
