package dev.kiln.jit.jvm;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.locks.LockSupport;

/**
 * A dedicated spinning pool for the JVM backend's parallel loops, the pure-Java counterpart of the
 * LLVM backend's native pool: {@code threads - 1} daemon platform threads per thread count wait for
 * work by spinning ({@link Thread#onSpinWait()}, {@link #SPIN} times) and then parking. A loop of
 * {@code n} iterations runs on {@code T = min(n, threads)} threads; thread {@code t} of them (the caller
 * is thread 0, worker {@code w} thread {@code w + 1}) owns the block {@code [t*n/T, (t+1)*n/T)}, cut into
 * up to {@link #CHUNKS_PER_THREAD} chunks, and runs it chunk by chunk first, so that consecutive loops
 * over the same space give each core the part of the data it wrote last (as the native pool does); then
 * it takes what is left of the other threads' blocks, so a chunk no worker has claimed yet (its thread
 * descheduled on a loaded machine) is run by another thread instead of waited for. Each block's chunks
 * are claimed from an atomic word of its own (generation, chunk count, next chunk), on a cache line of its
 * own. The caller publishes the loop with a volatile write, unparks only workers that sleep, runs its
 * share like any worker, and then spins (then parks) until every chunk is done. A loop started while the
 * pool runs another loop (a kernel called from several threads at once) runs on the calling thread, as
 * the native pool does. An exception thrown by a chunk is rethrown to the caller as it was thrown (the
 * first chunk's in iteration order when several fail).
 */
final class JvmSpinPool {
    /** Spins of an idle worker, or of the waiting caller, before it parks. */
    static final int SPIN = 2_000;

    /** The chunks a thread's block is cut into (fewer when the block has fewer iterations). */
    static final int CHUNKS_PER_THREAD = 4;

    /** Longs between two threads' claim words: 128 bytes, so no two share a cache line or its prefetch pair. */
    private static final int STRIDE = 16;

    /**
     * For same-process A/B measurements only ({@code SpinPoolLocality}): when set, loops are handed out as the
     * pool did before it had blocks, from one shared counter: a block is one chunk, and every thread takes the
     * chunks in order from thread 0's on, whichever comes first, instead of its own block first.
     */
    static volatile boolean sharedCounter;

    /**
     * For same-process A/B measurements only: the chunks a block is cut into, 1 to {@link #CHUNKS_PER_THREAD}
     * (1: a late thread's block is taken whole, as the old pool took a chunk; fewer claims per loop).
     */
    static volatile int chunksPerBlock = CHUNKS_PER_THREAD;

    private static final ConcurrentHashMap<Integer, JvmSpinPool> POOLS = new ConcurrentHashMap<>();

    private final Worker[] workers;
    private final AtomicBoolean busy = new AtomicBoolean();
    /** Per thread t, at t * STRIDE: generation (32 bits) | chunks of its block (16 bits) | next chunk (16 bits). */
    private final AtomicLongArray claims;

    private final AtomicInteger done = new AtomicInteger();
    /** Per chunk, at t * CHUNKS_PER_THREAD + j: what chunk j of thread t's block threw. */
    private final Throwable[] failures;

    private volatile int generation;
    private volatile boolean callerParked;
    private Thread caller;
    // the loop being run: written before the claim words are published, read after a chunk is claimed
    private JvmParallel.Body body;
    private long n;
    private int team;
    private int chunks;
    private boolean failed;

    private JvmSpinPool(int threads) {
        this(threads, threads - 1);
    }

    /**
     * A pool of {@code threads} threads of which only the first {@code started} workers are started: the
     * others never come (for tests: a worker that is always late).
     */
    JvmSpinPool(int threads, int started) {
        if (threads > 0xFFFF) throw new IllegalArgumentException("at most 65535 threads, not " + threads);
        workers = new Worker[threads - 1];
        claims = new AtomicLongArray(threads * STRIDE);
        failures = new Throwable[threads * CHUNKS_PER_THREAD];
        for (int w = 0; w < workers.length; w++) {
            workers[w] = new Worker(w + 1);
            Thread t = Thread.ofPlatform().daemon().name("kiln-jvm-spin-" + w).unstarted(workers[w]);
            workers[w].thread = t;
            if (w < started) t.start();
        }
    }

    /** Runs {@code body} over {@code [0, n)} on {@code threads} threads (the caller one of them). */
    static void run(JvmParallel.Body body, long n, int threads) {
        if (n <= 0) return;
        if (Math.min(n, threads) <= 1) {
            body.run(0, n);
            return;
        }
        POOLS.computeIfAbsent(threads, JvmSpinPool::new).invoke(body, n);
    }

    /** Runs {@code b} over {@code [0, count)} on this pool's threads, or on the caller's if the pool is busy. */
    void invoke(JvmParallel.Body b, long count) {
        if (count <= 0) return;
        int t = (int) Math.min(count, workers.length + 1);
        if (t <= 1 || !busy.compareAndSet(false, true)) {
            b.run(0, count);
            return;
        }
        try {
            int gen = generation + 1;
            body = b;
            n = count;
            team = t;
            caller = Thread.currentThread();
            done.set(0);
            int total = 0, per = sharedCounter ? 1 : Math.max(1, Math.min(chunksPerBlock, CHUNKS_PER_THREAD));
            for (int k = 0; k < t; k++) {
                long len = blockStart(k + 1, count, t) - blockStart(k, count, t);
                int m = (int) Math.min(per, len);
                total += m;
                claims.setRelease(k * STRIDE, (long) gen << 32 | (long) m << 16);
            }
            chunks = total;
            generation = gen;
            for (int w = 0; w < t - 1; w++) {
                if (workers[w].parked) LockSupport.unpark(workers[w].thread);
            }
            runChunks(gen, 0);
            for (int i = 0; done.get() != total; i++) {
                if (i < SPIN) {
                    Thread.onSpinWait();
                } else {
                    callerParked = true;
                    if (done.get() != total) LockSupport.park(this);
                    callerParked = false;
                }
            }
            if (failed) {
                failed = false;
                Throwable first = null;
                for (int k = 0; k < failures.length; k++) {
                    if (first == null) first = failures[k];
                    failures[k] = null;
                }
                if (first instanceof RuntimeException e) throw e;
                if (first instanceof Error e) throw e;
                if (first != null) throw new IllegalStateException("parallel loop failed", first);
            }
        } finally {
            body = null;
            caller = null;
            busy.set(false);
        }
    }

    /** The first iteration of thread {@code t}'s block, {@code floor(t * n / team)} without overflow. */
    static long blockStart(int t, long n, int team) {
        return t * (n / team) + t * (n % team) / team;
    }

    /**
     * Runs thread {@code me}'s share of loop {@code gen}: the chunks left of its own block, then those left of
     * the others' blocks, from the next thread's on, until none is left (or that loop is over); then counts the
     * chunks it ran as done, with one atomic add (a shared line touched once per thread and loop, not per chunk).
     */
    private void runChunks(int gen, int me) {
        int t = team, start = sharedCounter ? 0 : me;
        int ran = 0, all = 0;
        Thread waiting = null;
        // a worker that is not in the loop's team (n below the thread count) only takes what others left
        scan:
        for (int k = 0; k < t; k++) {
            int v = (start + k) % t;
            int slot = v * STRIDE;
            while (true) {
                long w = claims.get(slot);
                int j = (int) (w & 0xFFFF), m = (int) (w >>> 16 & 0xFFFF);
                if ((int) (w >>> 32) != gen) break scan;
                if (j >= m) break;
                if (!claims.compareAndSet(slot, w, w + 1)) continue;
                // chunk j of block v of loop gen is ours: that loop cannot end before it is counted done, so its
                // fields hold until this thread's add below
                waiting = caller;
                all = chunks;
                long count = n;
                int size = team;
                long lo = blockStart(v, count, size), len = blockStart(v + 1, count, size) - lo;
                long from = lo + part(j, len, m), to = lo + part(j + 1, len, m);
                try {
                    body.run(from, to);
                } catch (Throwable e) {
                    failures[v * CHUNKS_PER_THREAD + j] = e;
                    failed = true;
                }
                ran++;
            }
        }
        if (ran > 0 && done.addAndGet(ran) == all && callerParked) LockSupport.unpark(waiting);
    }

    /** {@code floor(j * len / m)} without overflow. */
    private static long part(int j, long len, int m) {
        return j * (len / m) + j * (len % m) / m;
    }

    private final class Worker implements Runnable {
        private final int index;
        private volatile boolean parked;
        private Thread thread;

        Worker(int index) {
            this.index = index;
        }

        @Override
        public void run() {
            int seen = 0;
            while (true) {
                int g;
                for (int i = 0; (g = generation) == seen; i++) {
                    if (i < SPIN) {
                        Thread.onSpinWait();
                    } else {
                        parked = true;
                        if (generation == seen) LockSupport.park(this);
                        parked = false;
                    }
                }
                seen = g;
                runChunks(g, index);
            }
        }
    }
}
