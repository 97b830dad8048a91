package dev.kiln.ir;

import java.util.ArrayList;
import java.util.List;

/**
 * A bottom-up expression rewriter. Subclasses override {@link #visit} for the nodes they change
 * and call {@link #rewriteChildren} for the rest; a parent is rebuilt only when a child changed,
 * so an unchanged tree comes back as the same object.
 */
public abstract class ExprRewriter {

    /** Rewrites one node; the default rewrites its children. */
    public Expr visit(Expr e) {
        return rewriteChildren(e);
    }

    /** Rewrites the children of {@code e} with {@link #visit}, rebuilding {@code e} only if one changed. */
    public final Expr rewriteChildren(Expr e) {
        return switch (e) {
            case IntImm c -> c;
            case FloatImm c -> c;
            case Var v -> v;
            case Binary b -> {
                Expr a = visit(b.a()), c = visit(b.b());
                yield a == b.a() && c == b.b() ? b : rebuildBinary(b.op(), a, c);
            }
            case Compare c -> {
                Expr a = visit(c.a()), b = visit(c.b());
                yield a == c.a() && b == c.b() ? c : new Compare(c.op(), a, b);
            }
            case And x -> {
                Expr a = visit(x.a()), b = visit(x.b());
                yield a == x.a() && b == x.b() ? x : new And(a, b);
            }
            case Or x -> {
                Expr a = visit(x.a()), b = visit(x.b());
                yield a == x.a() && b == x.b() ? x : new Or(a, b);
            }
            case Not n -> {
                Expr a = visit(n.a());
                yield a == n.a() ? n : new Not(a);
            }
            case Select s -> {
                Expr c = visit(s.cond()), t = visit(s.t()), f = visit(s.f());
                yield c == s.cond() && t == s.t() && f == s.f() ? s : new Select(c, t, f);
            }
            case Cast c -> {
                Expr v = visit(c.value());
                yield v == c.value() ? c : new Cast(c.dtype(), v);
            }
            case Call c -> {
                List<Expr> args = visitAll(c.args());
                yield args == c.args() ? c : new Call(c.fn(), args);
            }
            case TensorRead r -> {
                List<Expr> idx = visitAll(r.indices());
                yield idx == r.indices() ? r : new TensorRead(r.tensor(), idx);
            }
            case BufferLoad l -> {
                List<Expr> idx = visitAll(l.indices());
                yield idx == l.indices() ? l : new BufferLoad(l.buffer(), idx);
            }
            case Reduce r -> {
                List<Expr> src = visitAll(r.sources());
                Expr cond = visit(r.condition());
                yield src == r.sources() && cond == r.condition()
                        ? r
                        : new Reduce(r.reducer(), src, r.axes(), cond, r.valueIndex());
            }
        };
    }

    /** Hook for rewriters that want to canonicalise while rebuilding (the simplifier does). */
    protected Expr rebuildBinary(BinaryOp op, Expr a, Expr b) {
        return new Binary(op, a, b);
    }

    /** Visits every expression of a list; returns the same list object if nothing changed. */
    public final List<Expr> visitAll(List<Expr> in) {
        List<Expr> out = null;
        for (int i = 0; i < in.size(); i++) {
            Expr e = in.get(i);
            Expr n = visit(e);
            if (n != e && out == null) {
                out = new ArrayList<>(in.subList(0, i));
            }
            if (out != null) out.add(n);
        }
        return out == null ? in : out;
    }
}
