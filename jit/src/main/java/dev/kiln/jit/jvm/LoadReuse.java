package dev.kiln.jit.jvm;

import dev.kiln.ir.Buffer;
import dev.kiln.ir.BufferLoad;
import dev.kiln.ir.Expr;
import dev.kiln.ir.Exprs;
import dev.kiln.ir.IntImm;
import dev.kiln.tir.For;
import dev.kiln.tir.ForKind;
import dev.kiln.tir.Seq;
import dev.kiln.tir.Stmt;
import dev.kiln.tir.Stmts;
import dev.kiln.tir.Store;
import java.util.ArrayDeque;
import java.util.Collections;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Loads computed once per iteration of a register-promoted loop nest's innermost serial loop and
 * reused by every chunk and row that needs them: in a tiled GEMM's k step, one broadcast of
 * {@code A[i, k]} per row instead of one per chunk, one vector of {@code B.local} per chunk instead of
 * one per row; in a direct convolution's channel step, one padded-input broadcast (with its bounds
 * test) for all the output-channel chunks. C2 does not do this for us: each Vector API load carries
 * its own bounds and liveness checks, and loads behind different checks are not commoned.
 *
 * <p>Exact by construction. A loop qualifies when one iteration of its body is straight-line code:
 * vectorized loops only (through sequences), each run with its chunks unrolled because it touches a
 * promoted buffer ({@link Promotion#loops}), each holding only stores, so no mask and no branch. A value
 * is reused only within one iteration, only if every load in it reads a buffer the body does not store
 * to (parameters that are written do not overlap the others and allocations are disjoint), and keyed by
 * its expression (a vector load: buffer and lane-0 indices of the chunk; a uniform value: the
 * expression), so a reused value is the value a fresh computation would give. Off when the system
 * property {@code kiln.jvm.reuseLoads} is {@code false} (read at each compile, for A/B measurements).
 */
final class LoadReuse {
    /** Locals reserved for reused values, at most. */
    static final int MAX_SLOTS = 256;

    private final Map<Object, Integer> slots = new HashMap<>();
    private final int[] pool;
    private int used;
    private final Set<Buffer> stored = Collections.newSetFromMap(new IdentityHashMap<>());

    private LoadReuse(int[] pool) {
        this.pool = pool;
    }

    /**
     * Emits serial loop {@code f} with {@code emit}, reusing loads within each iteration when {@code f} is
     * inside (or is) promotion {@code p}'s loop and its body qualifies; otherwise just emits it.
     */
    static void emitLoop(MethodGen g, Promotion p, For f, Runnable emit) {
        if (p == null || p.reuse != null || !enabled() || !straight(p, f.body())) {
            emit.run();
            return;
        }
        int mark = g.mark();
        int[] pool = new int[bound(g, f.body())];
        for (int i = 0; i < pool.length; i++) pool[i] = g.newRefLocal();
        LoadReuse r = new LoadReuse(pool);
        Stmts.forEachStmt(f.body(), x -> {
            if (x instanceof Store st) r.stored.add(st.buffer().base());
        });
        p.reuse = r;
        List<dev.kiln.ir.Select> guards = InvariantGuards.hoist(g, f);
        try {
            emit.run();
        } finally {
            p.reuse = null;
            InvariantGuards.remove(g, guards);
        }
        g.release(mark);
    }

    static boolean enabled() {
        return !"false".equals(System.getProperty("kiln.jvm.reuseLoads"));
    }

    /** The reuse in effect for chunk {@code chunk} of the vectorized loop being emitted, or null. */
    static LoadReuse active(MethodGen g, int chunk) {
        if (chunk < 0 || g.promotions.isEmpty()) return null;
        return g.promotions.get(g.promotions.size() - 1).reuse;
    }

    /** Whether a value computed from {@code e} may be reused: it loads, and from no buffer the body stores to. */
    boolean reusable(Expr e) {
        boolean[] loads = {false};
        boolean[] bad = {false};
        Exprs.forEach(e, x -> {
            if (x instanceof BufferLoad l) {
                loads[0] = true;
                if (stored.contains(l.buffer().base())) bad[0] = true;
            }
        });
        return loads[0] && !bad[0];
    }

    /** The local holding the value of {@code key} in this iteration, or null. */
    Integer slot(Object key) {
        return slots.get(key);
    }

    /** A local to keep the value of {@code key} in, or null when the reserved locals are used up. */
    Integer keep(Object key) {
        if (used >= pool.length) return null;
        int slot = pool[used++];
        slots.put(key, slot);
        return slot;
    }

    private static boolean straight(Promotion p, Stmt body) {
        ArrayDeque<Stmt> todo = new ArrayDeque<>(List.of(body));
        while (!todo.isEmpty()) {
            Stmt s = todo.pop();
            if (s instanceof Seq q) {
                todo.addAll(q.stmts());
            } else if (!(s instanceof For v && p.loops.contains(v) && Promotion.storesOnly(v.body()))) {
                return false;
            }
        }
        return true;
    }

    /** At most how many values {@code body} can keep: its operations, once per chunk. */
    private static int bound(MethodGen g, Stmt body) {
        long[] n = {0};
        Stmts.forEachStmt(body, x -> {
            if (x instanceof For v && v.kind() == ForKind.VECTORIZED) {
                long chunks = ((IntImm) v.extent()).value() / Math.max(1, VectorGen.lanes(g, v));
                n[0] = Work.add(n[0], Work.mul(chunks, Work.ops(v.body())));
            }
        });
        return (int) Math.min(n[0], MAX_SLOTS);
    }
}
