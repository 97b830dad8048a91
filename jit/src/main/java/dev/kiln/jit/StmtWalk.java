package dev.kiln.jit;

import dev.kiln.ir.Buffer;
import dev.kiln.ir.BufferLoad;
import dev.kiln.ir.Expr;
import dev.kiln.ir.Exprs;
import dev.kiln.ir.Var;
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
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.LinkedHashSet;
import java.util.Set;
import java.util.function.Consumer;

/** Traversals of the loop IR that the code generator needs: expressions, variables, buffers. */
final class StmtWalk {
    private StmtWalk() {}

    /** Calls {@code f} on every top-level expression of every statement in {@code s}. */
    static void forEachExpr(Stmt s, Consumer<Expr> f) {
        switch (s) {
            case For l -> {
                f.accept(l.min());
                f.accept(l.extent());
                forEachExpr(l.body(), f);
            }
            case Store st -> {
                st.indices().forEach(f);
                f.accept(st.value());
            }
            case Allocate a -> forEachExpr(a.body(), f);
            case Seq q -> q.stmts().forEach(c -> forEachExpr(c, f));
            case IfThenElse i -> {
                f.accept(i.cond());
                forEachExpr(i.then(), f);
                if (i.otherwise() != null) forEachExpr(i.otherwise(), f);
            }
            case Let l -> {
                f.accept(l.value());
                forEachExpr(l.body(), f);
            }
            case Evaluate e -> f.accept(e.value());
            case Pragma p -> forEachExpr(p.body(), f);
            case Barrier b -> { }
        }
    }

    /** Every variable mentioned in {@code s}, in first-use order (identity). */
    static Set<Var> vars(Stmt s) {
        Set<Var> out = Collections.newSetFromMap(new IdentityHashMap<>());
        Set<Var> ordered = new LinkedHashSet<>();
        forEachExpr(s, e -> Exprs.forEach(e, x -> {
            if (x instanceof Var v && out.add(v)) ordered.add(v);
        }));
        return ordered;
    }

    /** Every buffer (the base of a view) loaded from or stored to in {@code s}, in first-use order. */
    static Set<Buffer> buffers(Stmt s) {
        Set<Buffer> ordered = new LinkedHashSet<>(); // Buffer compares by identity
        buffersInto(s, ordered);
        return ordered;
    }

    private static void buffersInto(Stmt s, Set<Buffer> out) {
        forEachExpr(s, e -> Exprs.forEach(e, x -> {
            if (x instanceof BufferLoad l) out.add(l.buffer().base());
        }));
        storedInto(s, out);
    }

    /** Every buffer (the base of a view) stored to in {@code s}. */
    static Set<Buffer> stored(Stmt s) {
        Set<Buffer> out = new LinkedHashSet<>();
        storedInto(s, out);
        return out;
    }

    private static void storedInto(Stmt s, Set<Buffer> out) {
        switch (s) {
            case For l -> storedInto(l.body(), out);
            case Store st -> out.add(st.buffer().base());
            case Allocate a -> storedInto(a.body(), out);
            case Seq q -> q.stmts().forEach(c -> storedInto(c, out));
            case IfThenElse i -> {
                storedInto(i.then(), out);
                if (i.otherwise() != null) storedInto(i.otherwise(), out);
            }
            case Let l -> storedInto(l.body(), out);
            case Evaluate e -> { }
            case Pragma p -> storedInto(p.body(), out);
            case Barrier b -> { }
        }
    }
}
