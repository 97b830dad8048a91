package dev.kiln.jit.jvm;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.ForkJoinWorkerThread;
import java.util.concurrent.RecursiveAction;

/**
 * The parallel runtime of the JVM backend. A parallel loop's body is outlined into a static method
 * of the kernel class taking the range {@code [lo, hi)} of iterations to run; the kernel hands it to
 * {@link #run} as a {@link Body} (a lambda made with {@code invokedynamic}), which splits the
 * iterations into one contiguous chunk per thread (TVM's static schedule) and runs the chunks on a
 * {@link ForkJoinPool} of the target's core count, the calling thread waiting. An exception thrown by
 * a chunk (a division by zero) is rethrown to the caller as it was thrown.
 */
final class JvmParallel {
    private JvmParallel() {}

    /** The outlined body of a parallel loop: runs iterations {@code [lo, hi)}. */
    @FunctionalInterface
    interface Body {
        void run(long lo, long hi);
    }

    private static final ConcurrentHashMap<Integer, ForkJoinPool> POOLS = new ConcurrentHashMap<>();

    /**
     * The internal name of the class whose {@code run(Body, long, int)} a kernel compiled now calls for
     * its parallel loops: {@link JvmSpinPool} unless the system property {@code kiln.jvm.parallel} is
     * {@code forkjoin} (this class); read at each compile, for A/B measurements with the compile cache
     * cleared.
     */
    static String runtime() {
        String p = System.getProperty("kiln.jvm.parallel", "spin");
        return switch (p) {
            case "spin" -> "dev/kiln/jit/jvm/JvmSpinPool";
            case "forkjoin" -> "dev/kiln/jit/jvm/JvmParallel";
            default ->
                throw new dev.kiln.ir.KilnException(
                        "system property kiln.jvm.parallel is '" + p + "'; it takes spin or forkjoin");
        };
    }

    /** Runs {@code body} over {@code [0, n)} on {@code threads} threads. */
    static void run(Body body, long n, int threads) {
        if (n <= 0) return;
        int chunks = (int) Math.min(n, threads);
        if (chunks <= 1) {
            body.run(0, n);
            return;
        }
        List<Chunk> tasks = new ArrayList<>(chunks);
        long per = n / chunks, extra = n % chunks, lo = 0;
        for (int c = 0; c < chunks; c++) {
            long hi = lo + per + (c < extra ? 1 : 0);
            tasks.add(new Chunk(body, lo, hi));
            lo = hi;
        }
        pool(threads).invoke(new Split(tasks));
        for (Chunk t : tasks) {
            if (t.failure instanceof RuntimeException e) throw e;
            if (t.failure instanceof Error e) throw e;
            if (t.failure != null) throw new IllegalStateException("parallel loop failed", t.failure);
        }
    }

    private static ForkJoinPool pool(int threads) {
        return POOLS.computeIfAbsent(
                threads,
                t -> new ForkJoinPool(
                        t,
                        p -> {
                            ForkJoinWorkerThread w = ForkJoinPool.defaultForkJoinWorkerThreadFactory.newThread(p);
                            w.setDaemon(true);
                            w.setName("kiln-jvm-" + w.getPoolIndex());
                            return w;
                        },
                        null,
                        false));
    }

    /** Forks one task per chunk but the first, runs that one, and waits for the others. */
    private static final class Split extends RecursiveAction {
        private final List<Chunk> tasks;

        Split(List<Chunk> tasks) {
            this.tasks = tasks;
        }

        @Override
        protected void compute() {
            for (int c = 1; c < tasks.size(); c++) tasks.get(c).fork();
            tasks.get(0).compute();
            for (int c = 1; c < tasks.size(); c++) tasks.get(c).join();
        }
    }

    private static final class Chunk extends RecursiveAction {
        private final Body body;
        private final long lo;
        private final long hi;
        Throwable failure;

        Chunk(Body body, long lo, long hi) {
            this.body = body;
            this.lo = lo;
            this.hi = hi;
        }

        @Override
        protected void compute() {
            try {
                body.run(lo, hi);
            } catch (Throwable t) {
                failure = t;
            }
        }
    }
}
