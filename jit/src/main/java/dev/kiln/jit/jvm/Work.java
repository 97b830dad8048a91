package dev.kiln.jit.jvm;

import dev.kiln.ir.Expr;
import dev.kiln.ir.Exprs;
import dev.kiln.ir.IntImm;
import dev.kiln.tir.Allocate;
import dev.kiln.tir.Barrier;
import dev.kiln.tir.Evaluate;
import dev.kiln.tir.For;
import dev.kiln.tir.ForKind;
import dev.kiln.tir.IfThenElse;
import dev.kiln.tir.Let;
import dev.kiln.tir.Pragma;
import dev.kiln.tir.Seq;
import dev.kiln.tir.Stmt;
import dev.kiln.tir.Store;

/**
 * Static estimates the code generator decides with: the work of a statement (expression nodes and
 * stores times the trip counts around them), to run small parallel loops on the calling thread;
 * and the size of its bytecode, to bound unrolling and to split methods before they pass HotSpot's
 * 8000-byte limit for JIT compilation.
 */
final class Work {
    private Work() {}

    /** Assumed trip count of a loop whose extent is not a constant. */
    static final long UNKNOWN_TRIPS = 64;
    /** Rough bytes of bytecode per expression node. */
    private static final long BYTES_PER_NODE = 7;

    static long trips(For f) {
        return f.extent() instanceof IntImm c ? Math.max(0, c.value()) : UNKNOWN_TRIPS;
    }

    /** Operations executed by {@code s}. */
    static long ops(Stmt s) {
        return switch (s) {
            case For f -> mul(trips(f), Math.max(1, ops(f.body())));
            case Store st -> 1 + st.indices().stream().mapToLong(Work::nodes).sum() + nodes(st.value());
            case Allocate a -> ops(a.body());
            case Seq q -> q.stmts().stream().mapToLong(Work::ops).reduce(0, Work::add);
            case IfThenElse i ->
                add(nodes(i.cond()), Math.max(ops(i.then()), i.otherwise() == null ? 0 : ops(i.otherwise())));
            case Let l -> add(nodes(l.value()), ops(l.body()));
            case Evaluate e -> nodes(e.value());
            case Pragma p -> ops(p.body());
            case Barrier b -> 0;
        };
    }

    /** Estimated bytes of bytecode for {@code s} (unrolled loops counted unrolled). */
    static long bytes(Stmt s) {
        return switch (s) {
            case For f -> {
                long body = bytes(f.body());
                long head = 30 + BYTES_PER_NODE * (nodes(f.min()) + nodes(f.extent()));
                if (f.kind() == ForKind.UNROLLED) yield add(head, mul(trips(f), body + 6));
                // the main chunk and the masked tail (vector calls take about the bytes of the scalar code)
                if (f.kind() == ForKind.VECTORIZED) yield add(head, mul(2, body));
                yield add(head, body);
            }
            case Store st ->
                BYTES_PER_NODE
                        * (2 + st.indices().stream().mapToLong(Work::nodes).sum() + nodes(st.value()));
            case Allocate a -> add(20, bytes(a.body()));
            case Seq q -> q.stmts().stream().mapToLong(Work::bytes).reduce(0, Work::add);
            case IfThenElse i ->
                add(
                        BYTES_PER_NODE * nodes(i.cond()) + 6,
                        add(bytes(i.then()), i.otherwise() == null ? 0 : bytes(i.otherwise())));
            case Let l -> add(BYTES_PER_NODE * nodes(l.value()) + 2, bytes(l.body()));
            case Evaluate e -> BYTES_PER_NODE * nodes(e.value());
            case Pragma p -> bytes(p.body());
            case Barrier b -> 0;
        };
    }

    static long nodes(Expr e) {
        long[] n = {0};
        Exprs.forEach(e, x -> n[0]++);
        return n[0];
    }

    static long add(long a, long b) {
        long r = a + b;
        return r < 0 ? Long.MAX_VALUE : r;
    }

    static long mul(long a, long b) {
        if (a == 0 || b == 0) return 0;
        return a > Long.MAX_VALUE / b ? Long.MAX_VALUE : a * b;
    }
}
