package dev.kiln.lower;

import dev.kiln.ir.Buffer;
import dev.kiln.ir.BufferLoad;
import dev.kiln.ir.Expr;
import dev.kiln.ir.ExprRewriter;
import dev.kiln.ir.Exprs;
import dev.kiln.ir.IntImm;
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
import dev.kiln.tir.StmtRewriter;
import dev.kiln.tir.Store;
import java.util.Map;
import java.util.OptionalLong;
import java.util.function.Consumer;

/** Small statement utilities the CPU passes share: substitution, traversal, sizes, constants. */
final class PassSupport {
    private PassSupport() {}

    /** Replaces variables by expressions in every expression of {@code s}. */
    static Stmt substitute(Stmt s, Map<Var, Expr> map) {
        if (map.isEmpty()) return s;
        return StmtRewriter.ofExprs(new ExprRewriter() {
            @Override
            public Expr visit(Expr e) {
                if (e instanceof Var v) {
                    Expr r = map.get(v);
                    return r == null ? v : r;
                }
                return rewriteChildren(e);
            }
        }).visit(s);
    }

    /** Replaces one variable by an expression in {@code s}. */
    static Stmt substitute(Stmt s, Var v, Expr by) {
        return substitute(s, Map.of(v, by));
    }

    /** The empty statement (an empty sequence)? */
    static boolean isEmpty(Stmt s) {
        return s instanceof Seq q && q.stmts().isEmpty();
    }

    /** The constant value of an integer expression, if it is one. */
    static OptionalLong constant(Expr e) {
        return e instanceof IntImm c && c.dtype().isInt() ? OptionalLong.of(c.value()) : OptionalLong.empty();
    }

    /** Calls {@code f} on {@code s} and every statement inside it, parents first. */
    static void forEachStmt(Stmt s, Consumer<Stmt> f) {
        f.accept(s);
        switch (s) {
            case For x -> forEachStmt(x.body(), f);
            case Store x -> { }
            case Allocate x -> forEachStmt(x.body(), f);
            case Seq x -> x.stmts().forEach(c -> forEachStmt(c, f));
            case IfThenElse x -> {
                forEachStmt(x.then(), f);
                if (x.otherwise() != null) forEachStmt(x.otherwise(), f);
            }
            case Let x -> forEachStmt(x.body(), f);
            case Evaluate x -> { }
            case Pragma x -> forEachStmt(x.body(), f);
            case Barrier x -> { }
        }
    }

    /** Calls {@code f} on every expression directly held by a statement of {@code s} (not their sub-expressions). */
    static void forEachExpr(Stmt s, Consumer<Expr> f) {
        forEachStmt(s, st -> {
            switch (st) {
                case For x -> {
                    f.accept(x.min());
                    f.accept(x.extent());
                }
                case Store x -> {
                    x.indices().forEach(f);
                    f.accept(x.value());
                }
                case Allocate x -> { }
                case Seq x -> { }
                case IfThenElse x -> f.accept(x.cond());
                case Let x -> f.accept(x.value());
                case Evaluate x -> f.accept(x.value());
                case Pragma x -> { }
                case Barrier x -> { }
            }
        });
    }

    /** Whether {@code s} mentions variable {@code v} in any expression. */
    static boolean uses(Stmt s, Var v) {
        boolean[] found = {false};
        forEachExpr(s, e -> { if (!found[0] && Exprs.uses(e, v)) found[0] = true; });
        return found[0];
    }

    /** Whether {@code s} reads or writes {@code b} or a view of the same memory. */
    static boolean touches(Stmt s, Buffer b) {
        Buffer base = b.base();
        boolean[] found = {false};
        forEachStmt(s, st -> {
            if (st instanceof Store x && x.buffer().base() == base) found[0] = true;
        });
        if (found[0]) return true;
        forEachExpr(s, e -> Exprs.forEach(e, x -> {
            if (x instanceof BufferLoad l && l.buffer().base() == base) found[0] = true;
        }));
        return found[0];
    }

    /** The number of statement nodes in {@code s} (sequences not counted), saturating at {@code cap + 1}. */
    static long size(Stmt s, long cap) {
        long[] n = {0};
        forEachStmt(s, st -> { if (!(st instanceof Seq)) n[0] = Math.min(cap + 1, n[0] + 1); });
        return n[0];
    }
}
