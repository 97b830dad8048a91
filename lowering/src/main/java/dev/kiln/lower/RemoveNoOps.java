package dev.kiln.lower;

import dev.kiln.ir.BufferLoad;
import dev.kiln.ir.Expr;
import dev.kiln.ir.FloatImm;
import dev.kiln.ir.IntImm;
import dev.kiln.ir.Not;
import dev.kiln.ir.Var;
import dev.kiln.tir.Allocate;
import dev.kiln.tir.Barrier;
import dev.kiln.tir.Evaluate;
import dev.kiln.tir.For;
import dev.kiln.tir.IfThenElse;
import dev.kiln.tir.Let;
import dev.kiln.tir.Pragma;
import dev.kiln.tir.PrimFunc;
import dev.kiln.tir.Seq;
import dev.kiln.tir.Stmt;
import dev.kiln.tir.Stmts;
import dev.kiln.tir.Store;
import java.util.ArrayList;
import java.util.List;

/**
 * Removes statements that do nothing, bottom-up, so that removing an inner statement can empty
 * (and remove) the one around it:
 *
 * <ul>
 *   <li>a store of a value to the place it was loaded from ({@code A[i] = A[i]});</li>
 *   <li>an evaluate of a constant or a variable;</li>
 *   <li>loops, lets, allocates and pragmas around nothing; loops of constant extent 0 or less;</li>
 *   <li>an if with constant condition (it becomes the branch taken), empty branches ({@code if
 *       (c) {} else {S}} becomes {@code if (!c) {S}}), and an if around nothing;</li>
 *   <li>an allocate whose buffer (or a view of its memory) is never loaded or stored in its body;</li>
 *   <li>a let whose variable is not used in its body: every Kiln expression is pure;</li>
 *   <li>empty and nested sequences (flattened); a sequence of one statement is that statement.</li>
 * </ul>
 *
 * Barriers stay: they order the threads of a GPU block. The empty statement is
 * {@link Seq#empty()}; a function whose body does nothing keeps that as its body.
 */
public final class RemoveNoOps {
    private RemoveNoOps() {}

    public static PrimFunc apply(PrimFunc f) {
        return f.withBody(visit(f.body()));
    }

    private static Stmt visit(Stmt s) {
        return switch (s) {
            case Store st ->
                st.value() instanceof BufferLoad l
                                && l.buffer() == st.buffer()
                                && l.indices().equals(st.indices())
                        ? Seq.empty()
                        : st;
            case Evaluate e ->
                e.value() instanceof IntImm || e.value() instanceof FloatImm || e.value() instanceof Var
                        ? Seq.empty()
                        : e;
            case Barrier b -> b;
            case For f -> {
                var ext = PassSupport.constant(f.extent());
                if (ext.isPresent() && ext.getAsLong() <= 0) yield Seq.empty();
                Stmt body = visit(f.body());
                yield Stmts.isEmpty(body) ? body : f.withBody(body);
            }
            case Let l -> {
                Stmt body = visit(l.body());
                if (Stmts.isEmpty(body) || !Stmts.uses(body, l.var())) yield body;
                yield body == l.body() ? l : new Let(l.var(), l.value(), body);
            }
            case Allocate a -> {
                Stmt body = visit(a.body());
                if (Stmts.isEmpty(body) || !Stmts.touches(body, a.buffer())) yield body;
                yield body == a.body() ? a : new Allocate(a.buffer(), body);
            }
            case Pragma p -> {
                Stmt body = visit(p.body());
                if (Stmts.isEmpty(body)) yield body;
                yield body == p.body() ? p : new Pragma(p.key(), p.value(), body);
            }
            case IfThenElse i -> ifThenElse(i);
            case Seq q -> {
                List<Stmt> out = new ArrayList<>();
                boolean changed = false;
                for (Stmt c : q.stmts()) {
                    Stmt n = visit(c);
                    changed |= n != c || n instanceof Seq;
                    if (n instanceof Seq inner) out.addAll(inner.stmts());
                    else out.add(n);
                }
                if (out.size() == 1) yield out.get(0);
                yield changed ? new Seq(out) : q;
            }
        };
    }

    private static Stmt ifThenElse(IfThenElse i) {
        if (i.cond() instanceof IntImm c) {
            if (c.value() != 0) return visit(i.then());
            return i.otherwise() == null ? Seq.empty() : visit(i.otherwise());
        }
        Stmt t = visit(i.then());
        Stmt e = i.otherwise() == null ? null : visit(i.otherwise());
        if (e != null && Stmts.isEmpty(e)) e = null;
        if (Stmts.isEmpty(t)) {
            if (e == null) return Seq.empty();
            Expr neg = i.cond() instanceof Not n ? n.a() : new Not(i.cond());
            return IfThenElse.of(neg, e);
        }
        return t == i.then() && e == i.otherwise() ? i : new IfThenElse(i.cond(), t, e);
    }
}
