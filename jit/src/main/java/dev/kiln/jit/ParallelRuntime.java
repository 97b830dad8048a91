package dev.kiln.jit;

/**
 * Who runs the iterations of a parallel loop. Either way the loop's body is outlined into a
 * function {@code body(ctx, begin, end)} and the kernel calls the runtime with it; small work
 * (iterations times the estimated cost of one) runs on the calling thread.
 */
public enum ParallelRuntime {
    /**
     * A thread pool written in LLVM IR inside the JIT: worker threads (started from Java, then
     * living in native code) sleep on a futex, take chunks with an atomic counter and report
     * through another futex. No Java code runs during the loop.
     */
    NATIVE_POOL,
    /**
     * The kernel calls a Panama upcall stub; Java splits the range over platform worker threads,
     * each calling the body through a downcall handle.
     */
    JAVA_POOL
}
