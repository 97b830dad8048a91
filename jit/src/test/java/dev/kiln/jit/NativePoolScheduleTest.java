package dev.kiln.jit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kiln.ir.KilnException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicReferenceArray;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * How the native pool ({@code native-pool.ll}) hands out a parallel loop's iterations: every iteration runs
 * exactly once, and thread {@code t} of {@code T} runs its own block {@code [t*n/T, (t+1)*n/T)} when it is on
 * time (the caller is thread 0), so consecutive loops give each core the same part of the data. The loop body
 * is a Java upcall that records which thread ran each iteration; the pool is a private one (one worker, its
 * own JIT), driven through {@code kiln_rt_native_parallel_for}.
 */
class NativePoolScheduleTest {
    private static final int MAX_N = 4096;
    private static final AtomicIntegerArray RUNS = new AtomicIntegerArray(MAX_N);
    private static final AtomicReferenceArray<Thread> RAN_ON = new AtomicReferenceArray<>(MAX_N);
    private static volatile long spinNanos;
    private static volatile boolean rendezvous;
    private static final java.util.Map<Thread, Long> firstBegin = new java.util.concurrent.ConcurrentHashMap<>();

    private static OrcJit jit;
    private static NativePool pool;
    private static MethodHandle parallelFor;
    private static MemorySegment body;
    private static Arena arena;

    /** The loop body: {@code fn(ctx, begin, end)}. */
    static void body(MemorySegment ctx, long begin, long end) {
        if (rendezvous) {
            Thread me = Thread.currentThread();
            if (firstBegin.putIfAbsent(me, begin) == null) {
                long until = System.nanoTime() + 10_000_000_000L;
                while (firstBegin.size() < 2 && System.nanoTime() < until) Thread.onSpinWait();
            }
        }
        for (long i = begin; i < end; i++) {
            RUNS.incrementAndGet((int) i);
            RAN_ON.set((int) i, Thread.currentThread());
        }
        long until = System.nanoTime() + spinNanos;
        while (System.nanoTime() < until) Thread.onSpinWait();
    }

    @BeforeAll
    static void start() throws ReflectiveOperationException {
        jit = new OrcJit(JitCheck.TARGET);
        pool = new NativePool(jit);
        pool.start(1, 0, 2_000, 4);
        arena = Arena.ofShared();
        Linker l = Linker.nativeLinker();
        MethodHandle h = MethodHandles.lookup()
                .findStatic(
                        NativePoolScheduleTest.class,
                        "body",
                        MethodType.methodType(void.class, MemorySegment.class, long.class, long.class));
        body = l.upcallStub(
                h, FunctionDescriptor.ofVoid(ValueLayout.ADDRESS, ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG), arena);
        parallelFor = l.downcallHandle(
                MemorySegment.ofAddress(pool.parallelForAddress()),
                FunctionDescriptor.of(
                        ValueLayout.JAVA_INT,
                        ValueLayout.ADDRESS,
                        ValueLayout.ADDRESS,
                        ValueLayout.JAVA_LONG,
                        ValueLayout.JAVA_LONG));
    }

    @AfterAll
    static void stop() {
        pool.close();
        jit.close();
        arena.close();
    }

    private static void run(long n) throws Throwable {
        for (int i = 0; i < MAX_N; i++) {
            RUNS.set(i, 0);
            RAN_ON.set(i, null);
        }
        int rc = (int) parallelFor.invokeExact(body, MemorySegment.NULL, n, Long.MAX_VALUE / MAX_N);
        assertThat(rc).isZero();
    }

    @Test
    void everyIterationRunsExactlyOnce() throws Throwable {
        spinNanos = 0;
        for (long n : new long[] {1, 2, 3, 5, 7, 8, 9, 63, 64, 1000, MAX_N}) {
            for (int rep = 0; rep < 5; rep++) {
                run(n);
                for (int i = 0; i < MAX_N; i++)
                    assertThat(RUNS.get(i)).as("n=%d iteration %d", n, i).isEqualTo(i < n ? 1 : 0);
            }
        }
    }

    @Test
    void eachThreadStartsOnItsOwnBlock() throws Throwable {
        // each thread's first chunk waits (up to 10 s) until the other has taken its first, so both are on time
        // whatever the machine's load (neither can finish its block and steal before the other starts): then the
        // caller must have started at 0 and the worker at n/2. A single counter for all threads (dynamic hand-out)
        // would give the second thread to arrive the chunk after the first one's, 8.
        spinNanos = 0;
        int n = 64;
        for (int r = 0; r < 10; r++) {
            rendezvous = true;
            firstBegin.clear();
            try {
                run(n);
            } finally {
                rendezvous = false;
            }
            Thread caller = Thread.currentThread();
            assertThat(firstBegin).as("first chunk per thread, run %d", r).hasSize(2);
            firstBegin.forEach((t, b) -> assertThat(b)
                    .as("the first iteration %s ran", t == caller ? "the caller" : "the worker")
                    .isEqualTo(t == caller ? 0L : n / 2));
            for (int i = 0; i < n; i++) assertThat(RUNS.get(i)).isEqualTo(1);
        }
    }

    @Test
    void tooManyThreadsAreRefused() {
        try (OrcJit other = new OrcJit(JitCheck.TARGET);
                NativePool p = new NativePool(other)) {
            assertThatThrownBy(() -> p.start(NativePool.MAX_THREADS, 0, 2_000, 4))
                    .isInstanceOf(KilnException.class)
                    .hasMessageContaining("at most " + NativePool.MAX_THREADS + " threads");
        }
    }
}
