package dev.kiln.jit;

import dev.kiln.ir.KilnException;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.util.ArrayList;
import java.util.List;

/**
 * The native parallel runtime: a thread pool written in LLVM IR ({@code native-pool.ll}) and
 * linked into the JIT once. Its workers are Java platform threads that call into
 * {@code kiln_rt_worker} and stay in native code: they spin briefly, then sleep on a futex, until
 * a kernel publishes a loop. Thread {@code t} of {@code T} (the caller is thread 0) owns the block
 * {@code [t*n/T, (t+1)*n/T)} of a loop's {@code n} iterations and runs it chunk by chunk first, so that
 * consecutive loops over the same space give each core the part of the data it wrote last (the next kernel
 * reads it from its own caches); then it takes what is left of the other threads' blocks, so a late or
 * descheduled worker does not stall the loop. Workers report through a second futex; a futex wake is made
 * only when a thread sleeps. While a hold is taken
 * ({@link #hold}, around a network's run) waiting threads never sleep. A loop whose estimated work
 * is below the threshold, a loop with one iteration, or a loop started while the pool is busy
 * (another thread's kernel, or a nested call) runs on the calling thread. {@link #close()} stops and joins the workers.
 */
final class NativePool implements AutoCloseable {
    static final String PARALLEL_FOR = "kiln_rt_native_parallel_for";
    private static final String WORKER = "kiln_rt_worker";
    private static final String CONFIGURE = "kiln_rt_configure";
    private static final String STOP = "kiln_rt_stop";
    private static final String HOLD = "kiln_rt_hold";
    private static final String SLEEPS = "kiln_rt_sleeps";
    /** The workspace cache's entry points, called by kernels for their heap temporaries (see StmtGen). */
    static final String ALLOC = "kiln_rt_alloc";

    static final String FREE = "kiln_rt_free";
    private static final String WS_FRESH = "kiln_rt_ws_fresh_count";
    private static final String EVICT = "kiln_rt_evict";
    private static final String WS_EVICT = "kiln_rt_ws_evict";

    /** The most threads a loop runs on, the caller included: the size of {@code native-pool.ll}'s block tables. */
    static final int MAX_THREADS = 512;

    private final JitModule module;
    private final List<Thread> threads = new ArrayList<>();
    private final MethodHandle configure;
    private final MethodHandle stop;
    private final MethodHandle worker;
    private final MethodHandle hold;
    private final MethodHandle sleeps;
    private final MethodHandle workspaceFresh;
    private final MethodHandle evict;
    private final MethodHandle workspaceEvict;
    private boolean started;
    private boolean closed;

    NativePool(OrcJit jit) {
        String ir = resource("native-pool.ll")
                .replace("@SYS_FUTEX@", futexSyscall(jit.target().triple()));
        this.module = jit.add(
                "kiln native pool",
                ir,
                List.of(PARALLEL_FOR, WORKER, CONFIGURE, STOP, HOLD, SLEEPS, ALLOC, FREE, WS_FRESH, EVICT, WS_EVICT),
                true);
        Linker l = Linker.nativeLinker();
        this.configure = l.downcallHandle(
                MemorySegment.ofAddress(module.address(CONFIGURE)),
                FunctionDescriptor.ofVoid(
                        ValueLayout.JAVA_INT, ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT, ValueLayout.JAVA_LONG));
        this.stop = l.downcallHandle(MemorySegment.ofAddress(module.address(STOP)), FunctionDescriptor.ofVoid());
        this.worker = l.downcallHandle(
                MemorySegment.ofAddress(module.address(WORKER)), FunctionDescriptor.ofVoid(ValueLayout.JAVA_INT));
        this.hold = l.downcallHandle(
                MemorySegment.ofAddress(module.address(HOLD)),
                FunctionDescriptor.ofVoid(ValueLayout.JAVA_INT),
                Linker.Option.critical(false));
        this.sleeps = l.downcallHandle(
                MemorySegment.ofAddress(module.address(SLEEPS)),
                FunctionDescriptor.of(ValueLayout.JAVA_LONG),
                Linker.Option.critical(false));
        this.workspaceFresh = l.downcallHandle(
                MemorySegment.ofAddress(module.address(WS_FRESH)),
                FunctionDescriptor.of(ValueLayout.JAVA_LONG),
                Linker.Option.critical(false));
        this.evict = l.downcallHandle(
                MemorySegment.ofAddress(module.address(EVICT)),
                FunctionDescriptor.ofVoid(ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG),
                Linker.Option.critical(false));
        this.workspaceEvict = l.downcallHandle(
                MemorySegment.ofAddress(module.address(WS_EVICT)),
                FunctionDescriptor.of(ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG),
                Linker.Option.critical(false));
    }

    /**
     * Evicts a native segment's cache lines from every core's caches ({@code clflush} per line, then
     * {@code mfence}; {@code kiln_rt_evict} in {@code native-pool.ll}). Heap segments are refused.
     */
    void evict(MemorySegment segment) {
        if (!segment.isNative())
            throw new KilnException(
                    "evict: only native memory can be evicted, got a heap segment of " + segment.byteSize() + " bytes");
        if (segment.byteSize() == 0) return;
        long start = segment.address() & ~63L, end = segment.address() + segment.byteSize();
        try {
            evict.invokeExact(start, end - start);
        } catch (Throwable t) {
            throw new IllegalStateException("cannot evict memory from the caches", t);
        }
    }

    /** The entry of {@code kiln_rt_native_parallel_for(fn, ctx, n, cost)}, for tests that drive the pool directly. */
    long parallelForAddress() {
        return module.address(PARALLEL_FOR);
    }

    private static String futexSyscall(String triple) {
        if (triple.startsWith("x86_64") && triple.contains("linux")) return "202";
        throw new KilnException("the native parallel runtime is written for x86_64 Linux (futex, pause), not for '"
                + triple + "'; use ParallelRuntime.JAVA_POOL");
    }

    static String resource(String name) {
        try (var in = NativePool.class.getResourceAsStream(name)) {
            if (in == null) throw new IllegalStateException("missing resource " + name);
            return new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
        } catch (java.io.IOException e) {
            throw new IllegalStateException("cannot read resource " + name, e);
        }
    }

    /**
     * Starts {@code workers} worker threads (the caller of a parallel loop is one more) with the
     * given tuning: loops below {@code threshold} operations run serially, waiting threads spin
     * {@code spin} times before sleeping, and a loop is cut into {@code chunksPerThread} chunks per
     * thread. Idempotent: the first call wins.
     */
    synchronized void start(int workers, long threshold, int spin, long chunksPerThread) {
        if (started || closed) return;
        if (workers < 0 || workers + 1 > MAX_THREADS)
            throw new KilnException("the native pool runs at most " + MAX_THREADS + " threads (the caller and "
                    + (MAX_THREADS - 1) + " workers); asked for " + workers + " workers");
        started = true;
        try {
            configure.invokeExact(workers, threshold, spin, chunksPerThread);
        } catch (Throwable t) {
            throw new IllegalStateException("cannot configure the native pool", t);
        }
        for (int i = 0; i < workers; i++) {
            final int id = i;
            Thread t = Thread.ofPlatform()
                    .daemon()
                    .name("kiln-native-worker-" + i)
                    .unstarted(() -> {
                        try {
                            worker.invokeExact(id);
                        } catch (Throwable e) {
                            System.getLogger(NativePool.class.getName())
                                    .log(System.Logger.Level.ERROR, "native pool worker " + id + " failed", e);
                        }
                    });
            threads.add(t);
            t.start();
        }
    }

    /**
     * How many heap temporaries kernels have taken from {@code aligned_alloc} so far: the workspace
     * cache's misses ({@code kiln_rt_alloc} in {@code native-pool.ll}). A kernel called again with
     * the cache warm adds none.
     */
    long workspaceMisses() {
        try {
            return (long) workspaceFresh.invokeExact();
        } catch (Throwable t) {
            throw new IllegalStateException("cannot read the workspace cache's counter", t);
        }
    }

    /**
     * Evicts from every core's caches the blocks of exactly {@code bytes} bytes that the workspace cache holds for
     * kernels' heap temporaries ({@code kiln_rt_ws_evict}); blocks in use are skipped. Returns how many it evicted.
     */
    long evictWorkspace(long bytes) {
        if (bytes <= 0) throw new KilnException("evictWorkspace: a block has a positive size, got " + bytes);
        try {
            return (long) workspaceEvict.invokeExact(bytes);
        } catch (Throwable t) {
            throw new IllegalStateException("cannot evict the workspace cache's blocks", t);
        }
    }

    synchronized boolean started() {
        return started;
    }

    /** Changes the tuning of a started pool (benchmarks sweep it); the worker count stays. */
    synchronized void tune(long threshold, int spin, long chunksPerThread) {
        if (!started || closed) throw new IllegalStateException("the native pool is not running");
        try {
            configure.invokeExact(threads.size(), threshold, spin, chunksPerThread);
        } catch (Throwable t) {
            throw new IllegalStateException("cannot configure the native pool", t);
        }
    }

    /**
     * Adds {@code delta} (1 or -1) to the pool's hold count: while it is above 0, threads waiting for
     * a loop (workers) or for its end (the caller) keep polling instead of sleeping on a futex, so
     * kernels called back to back pay no wake-up. Taking a hold wakes sleeping workers. Not
     * synchronized: it is one atomic add in native code, made around every network run.
     */
    void hold(int delta) {
        try {
            hold.invokeExact(delta);
        } catch (Throwable t) {
            throw new IllegalStateException("cannot change the native pool's hold", t);
        }
    }

    /** How many times the pool's threads (workers, and callers waiting for them) have slept on a futex. */
    long sleeps() {
        try {
            return (long) sleeps.invokeExact();
        } catch (Throwable t) {
            throw new IllegalStateException("cannot read the native pool's sleep count", t);
        }
    }

    @Override
    public synchronized void close() {
        if (closed) return;
        closed = true;
        if (started) {
            try {
                stop.invokeExact();
            } catch (Throwable t) {
                throw new IllegalStateException("cannot stop the native pool", t);
            }
            for (Thread t : threads) {
                try {
                    t.join(5000);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    break;
                }
            }
        }
        module.close();
    }
}
