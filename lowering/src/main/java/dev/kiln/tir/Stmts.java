package dev.kiln.tir;

import dev.kiln.ir.Buffer;
import dev.kiln.ir.BufferLoad;
import dev.kiln.ir.Expr;
import dev.kiln.ir.ExprRewriter;
import dev.kiln.ir.Exprs;
import dev.kiln.ir.Var;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;

/**
 * The walks over the loop IR that passes and backends share (TVM's {@code PostOrderVisit} and
 * {@code Substitute}, from {@code stmt_functor.h}): every statement, every expression, what a
 * statement uses and touches, and substitution of variables. All walk in program order (see
 * {@link StmtVisitor}); the rewrites are {@link StmtRewriter}s, so an untouched statement comes
 * back as the same object.
 */
public final class Stmts {
    private Stmts() {}

    /** Calls {@code f} on {@code s} and every statement inside it, parents first. */
    public static void forEachStmt(Stmt s, Consumer<Stmt> f) {
        new StmtVisitor() {
            @Override
            public void visit(Stmt x) {
                f.accept(x);
                visitChildren(x);
            }
        }.visit(s);
    }

    /** Calls {@code f} on every expression held directly by a statement of {@code s} (not their sub-expressions). */
    public static void forEachExpr(Stmt s, Consumer<Expr> f) {
        new StmtVisitor() {
            @Override
            public void visitExpr(Expr e) {
                f.accept(e);
            }
        }.visit(s);
    }

    /** Calls {@code f} on every expression node in {@code s}: each expression a statement holds, and all inside it. */
    public static void forEachExprNode(Stmt s, Consumer<Expr> f) {
        forEachExpr(s, e -> Exprs.forEach(e, f));
    }

    /** The empty statement (an empty sequence)? */
    public static boolean isEmpty(Stmt s) {
        return s instanceof Seq q && q.stmts().isEmpty();
    }

    /** Whether {@code s} mentions variable {@code v} in any expression. */
    public static boolean uses(Stmt s, Var v) {
        boolean[] found = {false};
        forEachExpr(s, e -> {
            if (!found[0] && Exprs.uses(e, v)) found[0] = true;
        });
        return found[0];
    }

    /** Whether {@code s} reads or writes {@code b} or a view of the same memory. */
    public static boolean touches(Stmt s, Buffer b) {
        Buffer base = b.base();
        boolean[] found = {false};
        forEachStmt(s, st -> {
            if (st instanceof Store x && x.buffer().base() == base) found[0] = true;
        });
        if (found[0]) return true;
        forEachExprNode(s, x -> {
            if (x instanceof BufferLoad l && l.buffer().base() == base) found[0] = true;
        });
        return found[0];
    }

    /** Every buffer (the base of a view) stored to in {@code s}, in program order. */
    public static Set<Buffer> stored(Stmt s) {
        Set<Buffer> out = new LinkedHashSet<>(); // Buffer compares by identity
        forEachStmt(s, st -> {
            if (st instanceof Store x) out.add(x.buffer().base());
        });
        return out;
    }

    /** The number of statement nodes in {@code s} (sequences not counted), saturating at {@code cap + 1}. */
    public static long size(Stmt s, long cap) {
        long[] n = {0};
        forEachStmt(s, st -> {
            if (!(st instanceof Seq)) n[0] = Math.min(cap + 1, n[0] + 1);
        });
        return n[0];
    }

    /**
     * Replaces variables by expressions in every expression of {@code s} (not in the variables
     * loops and lets bind). A statement without the variables comes back as the same object.
     */
    public static Stmt substitute(Stmt s, Map<Var, ? extends Expr> map) {
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
                })
                .visit(s);
    }

    /** Replaces one variable by an expression in {@code s}. */
    public static Stmt substitute(Stmt s, Var v, Expr by) {
        return substitute(s, Map.of(v, by));
    }
}
