package dev.kiln.lower;

import static dev.kiln.lower.GpuIr.bind;
import static dev.kiln.lower.GpuIr.buf;
import static dev.kiln.lower.GpuIr.c;
import static dev.kiln.lower.GpuIr.func;
import static dev.kiln.lower.GpuIr.load;
import static dev.kiln.lower.GpuIr.serial;
import static dev.kiln.lower.GpuIr.store;
import static dev.kiln.lower.GpuIr.v;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.kiln.ir.Buffer;
import dev.kiln.ir.Expr;
import dev.kiln.ir.KilnException;
import dev.kiln.ir.MemoryScope;
import dev.kiln.ir.Var;
import dev.kiln.tir.Allocate;
import dev.kiln.tir.Barrier;
import dev.kiln.tir.IfThenElse;
import dev.kiln.tir.PrimFunc;
import dev.kiln.tir.Seq;
import dev.kiln.tir.Stmt;
import org.junit.jupiter.api.Test;

/** Where {@link InjectBarriers} puts barriers, and where it refuses to. */
class InjectBarriersTest {
    private final Buffer a = buf("A", MemoryScope.GLOBAL, 2, 16);
    private final Buffer s = buf("S", MemoryScope.SHARED, 8);
    private final Buffer out = buf("C", MemoryScope.GLOBAL, 2, 8);
    private final Var b = v("b"), t = v("t"), u = v("u"), k = v("k");

    /** threadIdx u (8) { S[u] = A[b, k*8 + u] }: a cooperative fetch of step k. */
    private Stmt fetch(Var var) {
        return fetch(var, k.mul(8));
    }

    private Stmt fetch(Var var, Expr offset) {
        return bind("threadIdx.x", var, 8, store(s, load(a, b, offset.add(var)), var));
    }

    /** C[b, t] = C[b, t] + S[7 - t]: a use by thread t of what thread 7 - t fetched. */
    private Stmt use() {
        return store(out, load(out, b, t).add(load(s, c(7).sub(t))), b, t);
    }

    private PrimFunc kernel(Stmt... threadBody) {
        return func(bind("blockIdx.x", b, 2, new Allocate(s, bind("threadIdx.x", t, 8, threadBody))), a, out);
    }

    @Test
    void fetchThenUseInsideAReductionLoop() {
        PrimFunc f = InjectBarriers.apply(kernel(serial(k, 2, fetch(u), use())));
        assertEquals("""
                func f(A: float32[2, 16], C: float32[2, 8]) {
                  for[blockIdx.x] b in 0..2 {
                    allocate S: float32[8] shared
                    for[threadIdx.x] t in 0..8 {
                      for k in 0..2 {
                        for[threadIdx.x] u in 0..8 {
                          S[u] = A[b, ((k * 8) + u)]
                        }
                        barrier()
                        C[b, t] = (C[b, t] + S[(7 - t)])
                        barrier()
                      }
                    }
                  }
                }
                """, f.toString());
        assertSame(f, InjectBarriers.apply(f), "barriers already there count");
    }

    @Test
    void aLoopThatRunsOnceNeedsNoBarrierAtTheEnd() {
        PrimFunc f = InjectBarriers.apply(kernel(serial(k, 1, fetch(u), use())));
        assertEquals(1, count(f.body()));
    }

    @Test
    void noSharedMemoryNoBarrier() {
        Buffer local = buf("L", MemoryScope.LOCAL, 1);
        PrimFunc f = func(
                bind(
                        "blockIdx.x",
                        b,
                        2,
                        bind(
                                "threadIdx.x",
                                t,
                                8,
                                new Allocate(
                                        local,
                                        serial(
                                                k,
                                                2,
                                                store(local, load(a, b, k.mul(8).add(t)), c(0)),
                                                store(out, load(local, c(0)), b, t))))),
                a,
                out);
        assertSame(f, InjectBarriers.apply(f));
    }

    @Test
    void readsOnlyNeedNoBarrier() {
        PrimFunc f = kernel(fetch(u, c(0)), serial(k, 4, use()));
        assertEquals(
                1, count(InjectBarriers.apply(f).body()), "one barrier after the fetch, none in the read-only loop");
    }

    @Test
    void writeAfterReadBetweenSiblingThreadLoops() {
        // blockIdx { S = fetch; C = use; S = fetch again; C = use again }, each a threadIdx loop of the block.
        Var t2 = v("t2"), t3 = v("t3"), t4 = v("t4");
        Stmt use2 = bind("threadIdx.x", t2, 8, store(out, load(s, c(7).sub(t2)), b, t2));
        Stmt use4 = bind("threadIdx.x", t4, 8, store(out, load(out, b, t4).add(load(s, c(7).sub(t4))), b, t4));
        PrimFunc f = func(
                bind("blockIdx.x", b, 2, new Allocate(s, Seq.of(fetch(u, c(0)), use2, fetch(t3, c(8)), use4))), a, out);
        assertEquals("""
                func f(A: float32[2, 16], C: float32[2, 8]) {
                  for[blockIdx.x] b in 0..2 {
                    allocate S: float32[8] shared
                    for[threadIdx.x] u in 0..8 {
                      S[u] = A[b, (0 + u)]
                    }
                    barrier()
                    for[threadIdx.x] t2 in 0..8 {
                      C[b, t2] = S[(7 - t2)]
                    }
                    barrier()
                    for[threadIdx.x] t3 in 0..8 {
                      S[t3] = A[b, (8 + t3)]
                    }
                    barrier()
                    for[threadIdx.x] t4 in 0..8 {
                      C[b, t4] = (C[b, t4] + S[(7 - t4)])
                    }
                  }
                }
                """, InjectBarriers.apply(f).toString());
    }

    @Test
    void vthreadLoopCarriesLikeASerialLoop() {
        Var vt = v("vt");
        PrimFunc f = func(
                bind(
                        "blockIdx.x",
                        b,
                        2,
                        new Allocate(s, bind("vthread", vt, 2, bind("threadIdx.x", t, 8, fetch(u, vt.mul(8)), use())))),
                a,
                out);
        assertEquals("""
                func f(A: float32[2, 16], C: float32[2, 8]) {
                  for[blockIdx.x] b in 0..2 {
                    allocate S: float32[8] shared
                    for[vthread] vt in 0..2 {
                      for[threadIdx.x] t in 0..8 {
                        for[threadIdx.x] u in 0..8 {
                          S[u] = A[b, ((vt * 8) + u)]
                        }
                        barrier()
                        C[b, t] = (C[b, t] + S[(7 - t)])
                      }
                      barrier()
                    }
                  }
                }
                """, InjectBarriers.apply(f).toString());
    }

    @Test
    void fetchAndUseUnderOneConditionAreRefused() {
        PrimFunc f = kernel(serial(k, 2, IfThenElse.of(t.lt(4), Seq.of(fetch(u), use()))));
        assertEquals(
                "function 'f': in kernel 'b' (blockIdx.x), shared buffer 'S' is written and read by different"
                        + " statements under the condition (t < 4), where not every thread of the block arrives, so "
                        + "no barrier can"
                        + " separate them; compute the shared stage outside that code",
                assertThrows(KilnException.class, () -> InjectBarriers.apply(f)).getMessage());
    }

    @Test
    void aGuardedFetchIsFine() {
        // The guard of a fetch whose split does not divide: the fetch is conditional, its use is not.
        PrimFunc f = kernel(bind("threadIdx.x", u, 8, IfThenElse.of(u.lt(6), store(s, load(a, b, u), u))), use());
        assertEquals(1, count(InjectBarriers.apply(f).body()));
    }

    private static int count(Stmt st) {
        int[] n = {0};
        dev.kiln.tir.Stmts.forEachStmt(st, x -> {
            if (x instanceof Barrier) n[0]++;
        });
        return n[0];
    }
}
