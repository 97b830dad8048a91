package dev.kiln.jit;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

/**
 * The Java parallel runtime: kernels call {@code kiln_rt_java_parallel_for}, a Panama upcall stub
 * into {@link #parallelFor}, which publishes the loop to platform worker threads (they spin with
 * {@link Thread#onSpinWait()}, then park) and runs chunks itself; every thread calls the outlined
 * body through a downcall handle. Small loops, single iterations and loops started while the pool
 * is busy run on the calling thread. Exceptions never escape the upcall (that would kill the
 * JVM): they are logged and reported to the kernel as a non-zero result.
 */
final class JavaPool implements AutoCloseable {
    static final String PARALLEL_FOR = "kiln_rt_java_parallel_for";

    /** (fn, ctx, begin, end) -> void, through the function pointer fn. */
    private static final MethodHandle BODY = Linker.nativeLinker()
            .downcallHandle(
                    FunctionDescriptor.ofVoid(ValueLayout.ADDRESS, ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG));

    private static volatile JavaPool instance;
    private static final Arena STUBS = Arena.ofAuto();
    private static volatile MemorySegment stub;

    private final int workers;
    private volatile long threshold;
    private volatile int spin;
    private volatile long chunksPerThread;
    private final List<Thread> threads = new ArrayList<>();
    private final AtomicInteger busy = new AtomicInteger();
    private volatile int generation;
    private volatile boolean stopped;
    private final AtomicLong next = new AtomicLong();
    private final AtomicInteger done = new AtomicInteger();
    private final AtomicReference<Throwable> failure = new AtomicReference<>();
    private MemorySegment fn;
    private MemorySegment ctx;
    private long n;
    private long chunk;
    private volatile Thread caller;

    private JavaPool(int workers, long threshold, int spin, long chunksPerThread) {
        this.workers = workers;
        this.threshold = threshold;
        this.spin = spin;
        this.chunksPerThread = chunksPerThread;
        for (int i = 0; i < workers; i++) {
            Thread t =
                    Thread.ofPlatform().daemon().name("kiln-java-worker-" + i).unstarted(this::workerLoop);
            threads.add(t);
            t.start();
        }
    }

    /** The address of the upcall stub kernels call; the pool's threads start on first use. */
    static synchronized long stubAddress() {
        if (stub == null) {
            try {
                MethodHandle target = MethodHandles.lookup()
                        .findStatic(
                                JavaPool.class,
                                "parallelFor",
                                MethodType.methodType(
                                        int.class, MemorySegment.class, MemorySegment.class, long.class, long.class));
                stub = Linker.nativeLinker()
                        .upcallStub(
                                target,
                                FunctionDescriptor.of(
                                        ValueLayout.JAVA_INT,
                                        ValueLayout.ADDRESS,
                                        ValueLayout.ADDRESS,
                                        ValueLayout.JAVA_LONG,
                                        ValueLayout.JAVA_LONG),
                                STUBS);
            } catch (ReflectiveOperationException e) {
                throw new IllegalStateException(e);
            }
        }
        return stub.address();
    }

    /** Starts the pool once (later calls keep the first configuration); see {@link NativePool#start}. */
    static synchronized void start(int workers, long threshold, int spin, long chunksPerThread) {
        if (instance == null) instance = new JavaPool(workers, threshold, spin, chunksPerThread);
    }

    /** The upcall target. Never throws. */
    private static int parallelFor(MemorySegment fn, MemorySegment ctx, long n, long cost) {
        try {
            JavaPool p = instance;
            if (n <= 0) return 0;
            if (p == null || p.workers == 0 || n == 1 || cost < p.threshold / n || !p.busy.compareAndSet(0, 1)) {
                BODY.invokeExact(fn, ctx, 0L, n);
                return 0;
            }
            try {
                return p.run(fn, ctx, n);
            } finally {
                p.busy.set(0);
            }
        } catch (Throwable t) {
            System.getLogger(JavaPool.class.getName()).log(System.Logger.Level.ERROR, "parallel loop failed", t);
            return 1;
        }
    }

    private int run(MemorySegment f, MemorySegment c, long count) throws Throwable {
        long pieces = (long) (workers + 1) * chunksPerThread;
        fn = f;
        ctx = c;
        n = count;
        chunk = Math.max(1, (count + pieces - 1) / pieces);
        next.set(0);
        done.set(0);
        failure.set(null);
        caller = Thread.currentThread();
        generation++; // volatile write publishes the fields above
        for (Thread t : threads) LockSupport.unpark(t);
        runChunks();
        for (int i = 0; done.get() != workers; i++) {
            if (i < spin) Thread.onSpinWait();
            else LockSupport.park(this);
        }
        Throwable t = failure.get();
        if (t != null) throw t;
        return 0;
    }

    private void runChunks() throws Throwable {
        MemorySegment f = fn, c = ctx;
        long count = n, ch = chunk;
        for (long b; (b = next.getAndAdd(ch)) < count; ) {
            BODY.invokeExact(f, c, b, Math.min(b + ch, count));
        }
    }

    private void workerLoop() {
        int seen = 0;
        while (true) {
            int g;
            for (int i = 0; (g = generation) == seen; i++) {
                if (stopped) return;
                if (i < spin) Thread.onSpinWait();
                else LockSupport.park(this);
            }
            seen = g;
            if (stopped) return;
            try {
                runChunks();
            } catch (Throwable t) {
                failure.compareAndSet(null, t);
            }
            if (done.incrementAndGet() == workers) LockSupport.unpark(caller);
        }
    }

    @Override
    public void close() {
        stopped = true;
        for (Thread t : threads) LockSupport.unpark(t);
    }

    /** Changes the tuning of the running pool (benchmarks sweep it). */
    static synchronized void tune(long threshold, int spin, long chunksPerThread) {
        JavaPool p = instance;
        if (p == null) throw new IllegalStateException("the Java pool is not running");
        p.threshold = threshold;
        p.spin = spin;
        p.chunksPerThread = chunksPerThread;
    }

    /** Stops the process-wide pool, if started (for tests and benchmarks that compare runtimes). */
    static synchronized void shutdown() {
        if (instance != null) {
            instance.close();
            instance = null;
        }
    }
}
