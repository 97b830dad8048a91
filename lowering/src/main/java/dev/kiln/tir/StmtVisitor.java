package dev.kiln.tir;

import dev.kiln.ir.Expr;

/**
 * A read-only walk over the loop IR (TVM's {@code StmtVisitor}, Halide's {@code IRVisitor}).
 * Override {@link #visit(Stmt)} for the statements a walk looks at, calling
 * {@link #visitChildren(Stmt)} to go on inside them, and {@link #visitExpr(Expr)} for the
 * expressions statements hold directly (walk their sub-expressions with
 * {@link dev.kiln.ir.Exprs#forEach}). Everything is visited in program order: a loop's min, extent,
 * then body; a store's indices, then its value; an if's condition, then its branches; a let's
 * value, then its body. An allocation's shape is not visited.
 *
 * <p>For a walk that must decide something for every kind of statement, write an exhaustive
 * {@code switch} instead, so that a new node is a compile error there.
 */
public abstract class StmtVisitor {

    /** Visits a statement; by default, its children. */
    public void visit(Stmt s) {
        visitChildren(s);
    }

    /** Visits an expression held directly by a statement; nothing by default. */
    public void visitExpr(Expr e) {}

    /** Visits the expressions and statements {@code s} holds, in program order. */
    public final void visitChildren(Stmt s) {
        switch (s) {
            case For f -> {
                visitExpr(f.min());
                visitExpr(f.extent());
                visit(f.body());
            }
            case Store st -> {
                st.indices().forEach(this::visitExpr);
                visitExpr(st.value());
            }
            case Allocate a -> visit(a.body());
            case Seq q -> q.stmts().forEach(this::visit);
            case IfThenElse i -> {
                visitExpr(i.cond());
                visit(i.then());
                if (i.otherwise() != null) visit(i.otherwise());
            }
            case Let l -> {
                visitExpr(l.value());
                visit(l.body());
            }
            case Evaluate e -> visitExpr(e.value());
            case Pragma p -> visit(p.body());
            case Barrier b -> {}
        }
    }
}
