package dev.kiln.jit.jvm;

import java.util.Arrays;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * A dedicated spinning pool for the JVM backend's parallel loops, the pure-Java counterpart of the
 * LLVM backend's native pool: {@code threads - 1} daemon platform threads per thread count wait for
 * work by spinning ({@link Thread#onSpinWait()}, {@link #SPIN} times) and then parking. A loop is cut
 * into one contiguous chunk per thread, as {@link JvmParallel} cuts it. The caller publishes the
 * loop with a volatile write, unparks only workers that sleep, and then takes chunks itself like any
 * worker: chunks are claimed from one atomic word (generation, chunk count, next chunk), so a chunk
 * no worker has claimed yet (its thread descheduled on a loaded machine) is run by the caller instead
 * of waited for, as a fork/join pool steals it back. The caller then spins (then parks) until every
 * chunk is done. A loop started while the pool runs another loop (a kernel called from several
 * threads at once) runs on the calling thread, as the native pool does. An exception thrown by a
 * chunk is rethrown to the caller as it was thrown.
 */
final class JvmSpinPool {
    /** Spins of an idle worker, or of the waiting caller, before it parks. */
    static final int SPIN = 2_000;

    private static final ConcurrentHashMap<Integer, JvmSpinPool> POOLS = new ConcurrentHashMap<>();

    private final Worker[] workers;
    private final AtomicBoolean busy = new AtomicBoolean();
    /** generation (32 bits) | chunk count (16 bits) | next chunk to claim (16 bits). */
    private final AtomicLong claims = new AtomicLong();

    private final AtomicInteger done = new AtomicInteger();
    private final Throwable[] failures;
    private volatile int generation;
    private volatile boolean callerParked;
    private Thread caller;
    // the loop being run: written before the claim word is published, read after a chunk is claimed
    private JvmParallel.Body body;
    private long n;
    private int chunks;

    private JvmSpinPool(int threads) {
        if (threads > 0xFFFF) throw new IllegalArgumentException("at most 65535 threads, not " + threads);
        workers = new Worker[threads - 1];
        failures = new Throwable[threads];
        for (int w = 0; w < workers.length; w++) {
            workers[w] = new Worker();
            Thread t = Thread.ofPlatform().daemon().name("kiln-jvm-spin-" + w).unstarted(workers[w]);
            workers[w].thread = t;
            t.start();
        }
    }

    /** Runs {@code body} over {@code [0, n)} on {@code threads} threads (the caller one of them). */
    static void run(JvmParallel.Body body, long n, int threads) {
        if (n <= 0) return;
        int chunks = (int) Math.min(n, threads);
        if (chunks <= 1) {
            body.run(0, n);
            return;
        }
        POOLS.computeIfAbsent(threads, JvmSpinPool::new).invoke(body, n, chunks);
    }

    private void invoke(JvmParallel.Body b, long count, int c) {
        if (!busy.compareAndSet(false, true)) {
            b.run(0, count);
            return;
        }
        try {
            int gen = generation + 1;
            body = b;
            n = count;
            chunks = c;
            caller = Thread.currentThread();
            Arrays.fill(failures, null);
            done.set(0);
            claims.set((long) gen << 32 | (long) c << 16);
            generation = gen;
            for (int w = 0; w < c - 1; w++) {
                if (workers[w].parked) LockSupport.unpark(workers[w].thread);
            }
            runChunks(gen);
            for (int i = 0; done.get() != c; i++) {
                if (i < SPIN) {
                    Thread.onSpinWait();
                } else {
                    callerParked = true;
                    if (done.get() != c) LockSupport.park(this);
                    callerParked = false;
                }
            }
            for (int k = 0; k < c; k++) {
                Throwable t = failures[k];
                if (t instanceof RuntimeException e) throw e;
                if (t instanceof Error e) throw e;
                if (t != null) throw new IllegalStateException("parallel loop failed", t);
            }
        } finally {
            body = null;
            caller = null;
            busy.set(false);
        }
    }

    /** Claims and runs chunks of loop {@code gen} until none is left (or that loop is over). */
    private void runChunks(int gen) {
        while (true) {
            long v = claims.get();
            int k = (int) (v & 0xFFFF), c = (int) (v >>> 16 & 0xFFFF);
            if ((int) (v >>> 32) != gen || k >= c) return;
            if (!claims.compareAndSet(v, v + 1)) continue;
            // chunk k of loop gen is ours: that loop cannot end before it is done, so its fields hold
            Thread waiting = caller;
            long per = n / c, extra = n % c;
            long lo = k * per + Math.min(k, extra), hi = lo + per + (k < extra ? 1 : 0);
            try {
                body.run(lo, hi);
            } catch (Throwable t) {
                failures[k] = t;
            }
            if (done.incrementAndGet() == c && callerParked) LockSupport.unpark(waiting);
        }
    }

    private final class Worker implements Runnable {
        private volatile boolean parked;
        private Thread thread;

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
                runChunks(g);
            }
        }
    }
}
