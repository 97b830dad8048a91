package dev.kiln.tir;

import dev.kiln.ir.Expr;
import dev.kiln.ir.ExprRewriter;
import java.util.ArrayList;
import java.util.List;

/**
 * A bottom-up statement rewriter. Override {@link #visit(Stmt)} for the statements a pass changes
 * and {@link #visitExpr(Expr)} for the expressions; a parent is rebuilt only when a child
 * changed, so an untouched program comes back as the same object.
 */
public abstract class StmtRewriter {

    public Stmt visit(Stmt s) {
        return rewriteChildren(s);
    }

    /** Rewrites an expression inside a statement; identity by default. */
    public Expr visitExpr(Expr e) {
        return e;
    }

    public final Stmt rewriteChildren(Stmt s) {
        return switch (s) {
            case For f -> {
                Expr min = visitExpr(f.min()), ext = visitExpr(f.extent());
                Stmt body = visit(f.body());
                yield min == f.min() && ext == f.extent() && body == f.body()
                        ? f
                        : new For(f.var(), min, ext, f.kind(), f.thread(), body);
            }
            case Store st -> {
                List<Expr> idx = visitExprs(st.indices());
                Expr v = visitExpr(st.value());
                yield idx == st.indices() && v == st.value() ? st : new Store(st.buffer(), idx, v);
            }
            case Allocate a -> {
                Stmt body = visit(a.body());
                yield body == a.body() ? a : new Allocate(a.buffer(), body);
            }
            case Seq q -> {
                List<Stmt> out = null;
                for (int i = 0; i < q.stmts().size(); i++) {
                    Stmt c = q.stmts().get(i);
                    Stmt n = visit(c);
                    if (n != c && out == null) out = new ArrayList<>(q.stmts().subList(0, i));
                    if (out != null) out.add(n);
                }
                yield out == null ? q : new Seq(out);
            }
            case IfThenElse i -> {
                Expr c = visitExpr(i.cond());
                Stmt t = visit(i.then());
                Stmt e = i.otherwise() == null ? null : visit(i.otherwise());
                yield c == i.cond() && t == i.then() && e == i.otherwise() ? i : new IfThenElse(c, t, e);
            }
            case Let l -> {
                Expr v = visitExpr(l.value());
                Stmt body = visit(l.body());
                yield v == l.value() && body == l.body() ? l : new Let(l.var(), v, body);
            }
            case Evaluate e -> {
                Expr v = visitExpr(e.value());
                yield v == e.value() ? e : new Evaluate(v);
            }
            case Pragma p -> {
                Stmt body = visit(p.body());
                yield body == p.body() ? p : new Pragma(p.key(), p.value(), body);
            }
            case Barrier b -> b;
        };
    }

    private List<Expr> visitExprs(List<Expr> in) {
        List<Expr> out = null;
        for (int i = 0; i < in.size(); i++) {
            Expr e = in.get(i);
            Expr n = visitExpr(e);
            if (n != e && out == null) out = new ArrayList<>(in.subList(0, i));
            if (out != null) out.add(n);
        }
        return out == null ? in : out;
    }

    /** A rewriter that applies an {@link ExprRewriter} to every expression of a statement. */
    public static StmtRewriter ofExprs(ExprRewriter r) {
        return new StmtRewriter() {
            @Override
            public Expr visitExpr(Expr e) {
                return r.visit(e);
            }
        };
    }
}
