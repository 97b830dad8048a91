package dev.kiln.jit.jvm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicReferenceArray;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * How {@link JvmSpinPool} hands out a parallel loop's iterations: every iteration runs exactly once, for
 * many loop sizes and thread counts (also below the thread count); thread {@code t} of {@code T} runs its
 * own block {@code [t*n/T, (t+1)*n/T)} first when it is on time (the caller is thread 0, worker
 * {@code kiln-jvm-spin-w} thread {@code w + 1}), so consecutive loops give each core the same part of the
 * data; a worker that never comes does not stall the loop; a chunk's exception reaches the caller as thrown.
 */
class JvmSpinPoolScheduleTest {
    private static final int MAX_N = 4096;
    private final AtomicIntegerArray runs = new AtomicIntegerArray(MAX_N);
    private final AtomicReferenceArray<Thread> ranOn = new AtomicReferenceArray<>(MAX_N);

    private void clear() {
        for (int i = 0; i < MAX_N; i++) {
            runs.set(i, 0);
            ranOn.set(i, null);
        }
    }

    private void record(long lo, long hi) {
        for (long i = lo; i < hi; i++) {
            runs.incrementAndGet((int) i);
            ranOn.set((int) i, Thread.currentThread());
        }
    }

    private void assertOnce(long n, String what) {
        for (int i = 0; i < MAX_N; i++)
            assertThat(runs.get(i)).as("%s: iteration %d", what, i).isEqualTo(i < n ? 1 : 0);
    }

    /** The thread index of a pool thread: 0 for the caller, {@code w + 1} for worker {@code kiln-jvm-spin-w}. */
    private static int index(Thread t, Thread caller) {
        if (t == caller) return 0;
        String name = t.getName();
        assertThat(name).startsWith("kiln-jvm-spin-");
        return Integer.parseInt(name.substring("kiln-jvm-spin-".length())) + 1;
    }

    @Test
    void blocksSplitTheLoopAsTheNativePoolDoes() {
        assertThat(JvmSpinPool.blockStart(0, 1000, 3)).isZero();
        assertThat(JvmSpinPool.blockStart(1, 1000, 3)).isEqualTo(333);
        assertThat(JvmSpinPool.blockStart(2, 1000, 3)).isEqualTo(666);
        assertThat(JvmSpinPool.blockStart(3, 1000, 3)).isEqualTo(1000);
        // no overflow where t * n would wrap
        long big = Long.MAX_VALUE - 6;
        assertThat(JvmSpinPool.blockStart(3, big, 7)).isEqualTo(big / 7 * 3 + big % 7 * 3 / 7);
        assertThat(JvmSpinPool.blockStart(7, big, 7)).isEqualTo(big);
    }

    @Test
    void everyIterationRunsExactlyOnce() {
        for (int threads : new int[] {2, 3, 4, 7}) {
            for (long n : new long[] {1, 2, 3, 5, 6, 7, 8, 9, 13, 28, 29, 63, 64, 1000, MAX_N}) {
                for (int rep = 0; rep < 5; rep++) {
                    clear();
                    JvmSpinPool.run(this::record, n, threads);
                    assertOnce(n, "threads=" + threads + " n=" + n + " rep " + rep);
                }
            }
        }
    }

    @Test
    void eachThreadStartsOnItsOwnBlock() {
        // Each thread's first chunk waits (up to 10 s) until every thread of the loop has taken its first, so all
        // are on time whatever the machine's load: no thread can finish its block and steal before the others
        // start. Then thread t must have started at t*n/T. One counter for all threads (the old pool) gives the
        // i-th thread to arrive the i-th chunk, whoever it is: the workers arrive in no fixed order.
        for (int threads : new int[] {2, 3, 4}) {
            int n = 1000;
            for (int r = 0; r < 10; r++) {
                Map<Thread, Long> first = new ConcurrentHashMap<>();
                clear();
                JvmSpinPool.run(
                        (lo, hi) -> {
                            if (first.putIfAbsent(Thread.currentThread(), lo) == null) {
                                long until = System.nanoTime() + 10_000_000_000L;
                                while (first.size() < threads && System.nanoTime() < until) Thread.yield();
                            }
                            record(lo, hi);
                        },
                        n,
                        threads);
                Thread caller = Thread.currentThread();
                assertThat(first)
                        .as("threads=%d run %d: first chunk per thread", threads, r)
                        .hasSize(threads);
                for (Map.Entry<Thread, Long> e : first.entrySet()) {
                    int t = index(e.getKey(), caller);
                    assertThat(e.getValue())
                            .as("threads=%d run %d: first iteration of thread %d (%s)", threads, r, t, e.getKey())
                            .isEqualTo(JvmSpinPool.blockStart(t, n, threads));
                }
                assertOnce(n, "threads=" + threads + " run " + r);
            }
        }
    }

    @Test
    @Timeout(60)
    void aWorkerThatNeverComesDoesNotStallTheLoop() {
        // 4 threads, of which worker 1 (thread 2) is never started: its block is run by the others
        JvmSpinPool pool = new JvmSpinPool(4, 1);
        for (long n : new long[] {2, 3, 4, 5, 100, 1000}) {
            for (int rep = 0; rep < 3; rep++) {
                clear();
                pool.invoke(this::record, n);
                assertOnce(n, "n=" + n + " rep " + rep);
            }
        }
    }

    @Test
    void aChunksExceptionReachesTheCallerAsThrown() {
        for (int threads : new int[] {2, 4}) {
            IllegalArgumentException boom = new IllegalArgumentException("boom");
            assertThatThrownBy(() -> JvmSpinPool.run(
                            (lo, hi) -> {
                                if (lo <= 700 && 700 < hi) throw boom;
                            },
                            1000,
                            threads))
                    .isSameAs(boom);
            // the earliest failing chunk in iteration order wins, and the pool runs the next loop as usual
            assertThatThrownBy(() -> JvmSpinPool.run(
                            (lo, hi) -> {
                                throw new ArithmeticException("chunk from " + lo);
                            },
                            1000,
                            threads))
                    .isInstanceOf(ArithmeticException.class)
                    .hasMessage("chunk from 0");
            StackOverflowError error = new StackOverflowError();
            assertThatThrownBy(() -> JvmSpinPool.run(
                            (lo, hi) -> {
                                if (lo == 0) throw error;
                            },
                            1000,
                            threads))
                    .isSameAs(error);
            clear();
            JvmSpinPool.run(this::record, 1000, threads);
            assertOnce(1000, "after failures, threads=" + threads);
        }
    }
}
