package dev.kiln.arith;

import dev.kiln.ir.And;
import dev.kiln.ir.Compare;
import dev.kiln.ir.CompareOp;
import dev.kiln.ir.Expr;
import dev.kiln.ir.ExprRewriter;
import dev.kiln.ir.FloatImm;
import dev.kiln.ir.IntImm;
import dev.kiln.ir.Not;
import dev.kiln.ir.Or;
import dev.kiln.ir.Var;
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
import dev.kiln.tir.StmtRewriter;
import dev.kiln.tir.Store;
import java.util.ArrayList;
import java.util.List;

/**
 * The statement rules of the simplifier. Expressions are simplified with the ranges of the
 * enclosing loops (and of let-bound integers, and of variables compared with constants in an
 * enclosing {@code if}); then:
 *
 * <ul>
 *   <li>{@code if-const}: an if whose condition is constant becomes the branch taken;
 *   <li>{@code if-empty}, {@code if-empty-else}, {@code if-empty-then}: empty branches go away;
 *   <li>{@code loop-extent-zero}: a loop that never runs goes away;
 *   <li>{@code loop-extent-one}: a loop that runs once becomes its body with the variable
 *       replaced by the loop's min (a constant or variable) or bound to it by a let (thread-bound
 *       loops stay: they define the launch shape);
 *   <li>{@code loop-empty-body}, {@code allocate-empty}, {@code let-empty-body}: a construct
 *       around nothing goes away;
 *   <li>{@code seq-flatten}, {@code seq-single}: nested sequences are flattened, empty ones
 *       removed, and a sequence of one statement is that statement;
 *   <li>{@code evaluate-const}: evaluating a constant does nothing.
 * </ul>
 * The empty statement is {@code Seq.empty()}.
 */
final class StmtSimplifier {
    private StmtSimplifier() {}

    static Stmt simplify(Simplifier s, Stmt st) {
        return visit(st, s);
    }

    private static Stmt visit(Stmt st, Simplifier s) {
        return switch (st) {
            case For f -> loop(f, s);
            case Store x -> {
                List<Expr> idx = x.indices().stream().map(s::simplify).toList();
                Expr v = s.simplify(x.value());
                yield v == x.value() && sameObjects(idx, x.indices()) ? x : new Store(x.buffer(), idx, v);
            }
            case Allocate a -> {
                Stmt body = visit(a.body(), s);
                if (isEmpty(body)) yield empty(s, "allocate-empty");
                yield body == a.body() ? a : new Allocate(a.buffer(), body);
            }
            case Seq q -> seq(q, s);
            case IfThenElse i -> ifThenElse(i, s);
            case Let l -> let(l, s);
            case Evaluate e -> {
                Expr v = s.simplify(e.value());
                if (v instanceof IntImm || v instanceof FloatImm) yield empty(s, "evaluate-const");
                yield v == e.value() ? e : new Evaluate(v);
            }
            case Pragma p -> {
                Stmt body = visit(p.body(), s);
                if (isEmpty(body)) yield body;
                yield body == p.body() ? p : new Pragma(p.key(), p.value(), body);
            }
            case Barrier b -> b;
        };
    }

    private static Stmt loop(For f, Simplifier s) {
        Expr min = s.simplify(f.min()), ext = s.simplify(f.extent());
        IntRange extent = s.bounds().bound(ext);
        if (extent.max() <= 0 && s.canDrop(min)) return empty(s, "loop-extent-zero");
        if (extent.isSingle() && extent.min() == 1 && f.kind() != ForKind.THREAD_BOUND) {
            s.fired("loop-extent-one");
            if (min instanceof IntImm || min instanceof Var) return visit(substitute(f.body(), f.var(), min), s);
            return visit(new Let(f.var(), min, f.body()), s);
        }
        Simplifier inner = s;
        if (extent.max() >= 1) {
            IntRange m = s.bounds().bound(min);
            try {
                IntRange r = IntRange.of(m.min(), Math.addExact(m.max(), extent.max() - 1));
                if (r.within(IntRange.full(f.var().dtype()))) inner = s.withRange(f.var(), r);
            } catch (ArithmeticException overflow) {
                // no range: the body is simplified without one
            }
        }
        Stmt body = visit(f.body(), inner);
        if (isEmpty(body) && s.canDrop(min) && s.canDrop(ext)) return empty(s, "loop-empty-body");
        return min == f.min() && ext == f.extent() && body == f.body()
                ? f
                : new For(f.var(), min, ext, f.kind(), f.thread(), body);
    }

    private static Stmt seq(Seq q, Simplifier s) {
        List<Stmt> out = new ArrayList<>();
        boolean changed = false;
        for (Stmt c : q.stmts()) {
            Stmt n = visit(c, s);
            if (n instanceof Seq inner) {
                s.fired("seq-flatten");
                out.addAll(inner.stmts()); // already flat: visit never returns nested sequences
                changed = true;
            } else {
                out.add(n);
                changed |= n != c;
            }
        }
        if (out.size() == 1) {
            s.fired("seq-single");
            return out.get(0);
        }
        return changed ? new Seq(out) : q;
    }

    private static Stmt ifThenElse(IfThenElse i, Simplifier s) {
        Expr c = s.simplify(i.cond());
        if (c instanceof IntImm k) {
            s.fired("if-const");
            if (k.value() != 0) return visit(i.then(), s);
            return i.otherwise() == null ? empty(s, null) : visit(i.otherwise(), s);
        }
        Stmt t = visit(i.then(), assume(s, c, true));
        Stmt e = i.otherwise() == null ? null : visit(i.otherwise(), assume(s, c, false));
        if (e != null && isEmpty(e)) {
            s.fired("if-empty-else");
            e = null;
        }
        if (isEmpty(t)) {
            if (e == null) return s.canDrop(c) ? empty(s, "if-empty") : new IfThenElse(c, t, null);
            s.fired("if-empty-then");
            return new IfThenElse(s.simplify(new Not(c)), e, null);
        }
        return c == i.cond() && t == i.then() && e == i.otherwise() ? i : new IfThenElse(c, t, e);
    }

    private static Stmt let(Let l, Simplifier s) {
        Expr v = s.simplify(l.value());
        Simplifier inner = s;
        if (!v.dtype().isFloat()) {
            IntRange r = s.bounds().bound(v);
            if (!r.equals(IntRange.full(v.dtype()))) inner = s.withRange(l.var(), r);
        }
        Stmt body = visit(l.body(), inner);
        if (isEmpty(body) && s.canDrop(v)) return empty(s, "let-empty-body");
        return v == l.value() && body == l.body() ? l : new Let(l.var(), v, body);
    }

    /**
     * The simplifier for a branch where {@code cond} is known to be {@code holds}: a comparison of
     * a variable with a constant narrows the variable's range (through and, or and not).
     */
    private static Simplifier assume(Simplifier s, Expr cond, boolean holds) {
        return switch (cond) {
            case And a when holds -> assume(assume(s, a.a(), true), a.b(), true);
            case Or o when !holds -> assume(assume(s, o.a(), false), o.b(), false);
            case Not n -> assume(s, n.a(), !holds);
            case Compare c
            when c.a() instanceof Var v
                    && c.b() instanceof IntImm k
                    && v.dtype().isInt() -> {
                CompareOp op = holds ? c.op() : negate(c.op());
                long x = k.value();
                IntRange known = s.bounds().bound(v);
                IntRange narrowed =
                        switch (op) {
                            case LT -> x == Long.MIN_VALUE ? null : known.intersect(IntRange.of(Long.MIN_VALUE, x - 1));
                            case LE -> known.intersect(IntRange.of(Long.MIN_VALUE, x));
                            case GT -> x == Long.MAX_VALUE ? null : known.intersect(IntRange.of(x + 1, Long.MAX_VALUE));
                            case GE -> known.intersect(IntRange.of(x, Long.MAX_VALUE));
                            case EQ -> known.intersect(IntRange.single(x));
                            case NE -> known;
                        };
                yield narrowed == null || narrowed.equals(known) ? s : s.withRange(v, narrowed);
            }
            default -> s;
        };
    }

    private static CompareOp negate(CompareOp op) {
        return switch (op) {
            case EQ -> CompareOp.NE;
            case NE -> CompareOp.EQ;
            case LT -> CompareOp.GE;
            case LE -> CompareOp.GT;
            case GT -> CompareOp.LE;
            case GE -> CompareOp.LT;
        };
    }

    private static Stmt substitute(Stmt body, Var v, Expr by) {
        return StmtRewriter.ofExprs(new ExprRewriter() {
                    @Override
                    public Expr visit(Expr e) {
                        return e == v ? by : rewriteChildren(e);
                    }
                })
                .visit(body);
    }

    private static boolean isEmpty(Stmt s) {
        return s instanceof Seq q && q.stmts().isEmpty();
    }

    private static Stmt empty(Simplifier s, String rule) {
        if (rule != null) s.fired(rule);
        return Seq.empty();
    }

    private static boolean sameObjects(List<Expr> a, List<Expr> b) {
        for (int i = 0; i < a.size(); i++) if (a.get(i) != b.get(i)) return false;
        return true;
    }
}
