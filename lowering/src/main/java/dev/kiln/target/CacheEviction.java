package dev.kiln.target;

import java.lang.foreign.MemorySegment;

/**
 * Evicts memory from every core's caches, as a backend can do it for its target (x86 {@code clflush} in the LLVM
 * backend's native runtime). The tuner uses it to time a kernel the way a network's first call of it runs: its
 * constant weights come from memory, since the other kernels of a run have pushed them out of every cache
 * (TVM's CPU cache flush, which Ansor's CPU tuning of networks uses). Writing a large buffer from one thread
 * cannot do this: it clears the shared cache and that thread's own, and leaves the other cores' caches warm.
 */
@FunctionalInterface
public interface CacheEviction {
    /** Evicts every cache line of {@code segment} (native memory) from all caches. */
    void evict(MemorySegment segment);

    /**
     * Evicts from all caches the memory a kernel's heap temporaries of {@code bytes} bytes will use on its next
     * call ({@link CompiledKernel#heapTemporaries()}): in a network the kernels between two calls of a kernel push
     * its temporaries out of the caches as they push its weights. Returns how many blocks were evicted; a backend
     * whose kernels keep no temporaries between calls has none (the default).
     */
    default long evictTemporaries(long bytes) {
        return 0;
    }
}
