package dev.kiln.jit;

import static dev.kiln.jit.Funcs.buf;
import static dev.kiln.jit.Funcs.load;
import static dev.kiln.jit.Funcs.loop;
import static dev.kiln.jit.Funcs.store;
import static org.assertj.core.api.Assertions.assertThat;

import dev.kiln.ir.Buffer;
import dev.kiln.ir.DType;
import dev.kiln.ir.FloatImm;
import dev.kiln.ir.Var;
import dev.kiln.runtime.NDArray;
import dev.kiln.target.WorkerPool;
import dev.kiln.tir.ForKind;
import dev.kiln.tir.PrimFunc;
import dev.kiln.tir.Seq;
import dev.kiln.tir.Stmt;
import java.util.List;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * The native pool's hold ({@link WorkerPool}): while held, its threads poll between parallel loops
 * instead of sleeping on a futex (the sleep count stays put however long the gap), released they
 * sleep again; results are the same either way. Needs a worker thread, so two cores or more.
 */
class WorkerHoldTest {
    private static final DType F32 = DType.FLOAT32;

    /** C = A x B for n x n, the rows in parallel (48 and up: above the pool's serial threshold). */
    private static PrimFunc parallelMatmul(int n) {
        Var i = new Var("i"), j = new Var("j"), k = new Var("k");
        Buffer a = buf("A", F32, n, n), b = buf("B", F32, n, n), c = buf("C", F32, n, n);
        Stmt inner = Seq.of(
                store(c, FloatImm.f32(0), i, j),
                loop(
                        k,
                        n,
                        ForKind.SERIAL,
                        store(c, load(c, i, j).add(load(a, i, k).mul(load(b, k, j))), i, j)));
        return new PrimFunc(
                "hold_mm" + n, List.of(a, b, c), loop(i, n, ForKind.PARALLEL, loop(j, n, ForKind.SERIAL, inner)));
    }

    @Test
    void heldThreadsDoNotSleepBetweenLoopsAndReleasedOnesDo() throws InterruptedException {
        Assumptions.assumeTrue(
                JitCheck.TARGET.cores() >= 2, "the pool has no worker thread on " + JitCheck.TARGET.cores() + " core");
        WorkerPool pool = JitCheck.BACKEND.workerPool(JitCheck.TARGET);
        PrimFunc f = parallelMatmul(64);
        List<NDArray> args = JitCheck.randomArgs(f, 3);
        try (LlvmKernel k = JitCheck.BACKEND.compile(f, JitCheck.TARGET)) {
            NDArray[] a = args.toArray(NDArray[]::new);
            k.call(a);
            NDArray first = args.get(2).copy();
            long s0 = pool.sleeps();
            assertThat(s0).isNotNegative();
            Thread.sleep(100); // far longer than the spin: the worker goes to sleep
            k.call(a);
            Thread.sleep(100);
            long s1 = pool.sleeps();
            assertThat(s1).as("sleeps without a hold").isGreaterThan(s0);
            pool.hold();
            long h0;
            try {
                k.call(a); // a worker that went to sleep just as the hold came is woken here
                Thread.sleep(50);
                h0 = pool.sleeps();
                for (int r = 0; r < 3; r++) {
                    k.call(a);
                    Thread.sleep(50);
                }
                assertThat(pool.sleeps()).as("sleeps while held").isEqualTo(h0);
            } finally {
                pool.release();
            }
            Thread.sleep(100);
            assertThat(pool.sleeps()).as("sleeps once released").isGreaterThan(h0);
            args.get(2).assertClose(first, 0, 0);
        } finally {
            args.forEach(NDArray::close);
        }
    }

    @Test
    void holdsNest() throws InterruptedException {
        Assumptions.assumeTrue(
                JitCheck.TARGET.cores() >= 2, "the pool has no worker thread on " + JitCheck.TARGET.cores() + " core");
        WorkerPool pool = JitCheck.BACKEND.workerPool(JitCheck.TARGET);
        PrimFunc f = parallelMatmul(48);
        List<NDArray> args = JitCheck.randomArgs(f, 4);
        try (LlvmKernel k = JitCheck.BACKEND.compile(f, JitCheck.TARGET)) {
            NDArray[] a = args.toArray(NDArray[]::new);
            pool.hold();
            pool.hold();
            pool.release(); // one hold left
            try {
                k.call(a);
                Thread.sleep(50);
                long h0 = pool.sleeps();
                k.call(a);
                Thread.sleep(100);
                assertThat(pool.sleeps()).as("sleeps under the remaining hold").isEqualTo(h0);
            } finally {
                pool.release();
            }
        } finally {
            args.forEach(NDArray::close);
        }
    }
}
