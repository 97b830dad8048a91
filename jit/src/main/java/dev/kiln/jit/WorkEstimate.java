package dev.kiln.jit;

import dev.kiln.ir.Expr;
import dev.kiln.ir.Exprs;
import dev.kiln.ir.IntImm;
import dev.kiln.tir.Allocate;
import dev.kiln.tir.Barrier;
import dev.kiln.tir.Evaluate;
import dev.kiln.tir.For;
import dev.kiln.tir.IfThenElse;
import dev.kiln.tir.Let;
import dev.kiln.tir.Pragma;
import dev.kiln.tir.Seq;
import dev.kiln.tir.Stmt;
import dev.kiln.tir.Store;

/**
 * A static estimate of the work in a statement, in "operations" (expression nodes and stores,
 * multiplied by the trip counts of the loops around them; a vectorized loop counts one trip per
 * {@link #VECTOR_SPEEDUP} lanes, as its body runs on vectors). The parallel runtimes run a
 * parallel loop on the calling thread when iterations times this estimate is below their
 * threshold, and the kernel handle uses it to pick the cheapest call path for tiny kernels.
 */
final class WorkEstimate {
    private WorkEstimate() {}

    /** Assumed trip count of a loop whose extent is not a constant. */
    static final long UNKNOWN_TRIPS = 64;
    /** How many lanes of a vectorized loop cost about as much as one scalar iteration. */
    static final long VECTOR_SPEEDUP = 8;

    static long of(Stmt s) {
        return switch (s) {
            case For f -> sat(trips(f), Math.max(1, of(f.body())));
            case Store st ->
                1 + st.indices().stream().mapToLong(WorkEstimate::nodes).sum() + nodes(st.value());
            case Allocate a -> of(a.body());
            case Seq q -> q.stmts().stream().mapToLong(WorkEstimate::of).reduce(0, WorkEstimate::add);
            case IfThenElse i ->
                add(nodes(i.cond()), Math.max(of(i.then()), i.otherwise() == null ? 0 : of(i.otherwise())));
            case Let l -> add(nodes(l.value()), of(l.body()));
            case Evaluate e -> nodes(e.value());
            case Pragma p -> of(p.body());
            case Barrier b -> 0;
        };
    }

    static long trips(For f) {
        long n = f.extent() instanceof IntImm c ? Math.max(0, c.value()) : UNKNOWN_TRIPS;
        return f.kind() == dev.kiln.tir.ForKind.VECTORIZED ? (n + VECTOR_SPEEDUP - 1) / VECTOR_SPEEDUP : n;
    }

    private static long nodes(Expr e) {
        long[] n = {0};
        Exprs.forEach(e, x -> n[0]++);
        return n[0];
    }

    private static long add(long a, long b) {
        long r = a + b;
        return r < 0 ? Long.MAX_VALUE : r;
    }

    private static long sat(long a, long b) {
        if (a == 0 || b == 0) return 0;
        return a > Long.MAX_VALUE / b ? Long.MAX_VALUE : a * b;
    }
}
