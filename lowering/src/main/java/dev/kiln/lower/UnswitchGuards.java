package dev.kiln.lower;

import dev.kiln.arith.ConstIntBound;
import dev.kiln.arith.IntRange;
import dev.kiln.arith.Simplifier;
import dev.kiln.ir.Compare;
import dev.kiln.ir.CompareOp;
import dev.kiln.ir.Expr;
import dev.kiln.ir.Exprs;
import dev.kiln.ir.Literals;
import dev.kiln.ir.Var;
import dev.kiln.tir.For;
import dev.kiln.tir.ForKind;
import dev.kiln.tir.IfThenElse;
import dev.kiln.tir.Let;
import dev.kiln.tir.PrimFunc;
import dev.kiln.tir.Seq;
import dev.kiln.tir.Stmt;
import dev.kiln.tir.StmtRewriter;
import dev.kiln.tir.StmtVisitor;
import dev.kiln.tir.Stmts;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Guard unswitching: a loop body whose guards hold for every iteration of the loops inside it
 * whenever one condition on the enclosing loops holds runs a guard-free copy then. This is what
 * makes a register tile with a tail fast when its outer loops are fused for parallelism: the
 * guard {@code floormod(f, 3) * 24 + i.3 < 56} of a 24-row tile over 56 rows is not affine in
 * the fused loop {@code f}, so {@link PartitionLoops} can only split the inner {@code i.3} loop
 * (rows 0..8 free, 8..24 guarded, in every tile). Here the body of {@code f} becomes
 *
 * <pre>
 * if (floormod(f, 3) * 24 + 23 &lt; 56) { body without that guard } else { body }
 * </pre>
 *
 * <p>For each loop, outermost first, every guard conjunct inside its body that is an integer
 * comparison ({@code < <= > >=}) affine, with a constant coefficient, in each loop variable bound
 * inside the body that it uses, and that uses no let variable bound there, is made independent of
 * those loops: each variable is replaced by the end of its range (the loop's constant min and
 * extent) at which the comparison is hardest to satisfy. The hoisted condition implies the guard
 * everywhere in the body, so dropping the guard under it is exact. Conjuncts that may divide by
 * zero are left alone (hoisting could evaluate them where the program does not), and so are those
 * whose hoisted form is provably true (then {@link PartitionLoops} drops them with no copy) or
 * provably false on the enclosing ranges (they are tried again in the inner loops). The guarded
 * body stays as the else branch (partitioned afterwards as before); the guard-free copy is
 * unswitched again inside. Programs with thread-bound loops (GPU kernels, where a branch around
 * a barrier would diverge) and bodies over {@link PartitionLoops#MAX_BODY_STMTS} statements are
 * left alone.
 */
public final class UnswitchGuards {
    private UnswitchGuards() {}

    public static PrimFunc apply(PrimFunc f) {
        boolean[] threads = {false};
        Stmts.forEachStmt(f.body(), s -> threads[0] |= s instanceof For l && l.kind() == ForKind.THREAD_BOUND);
        if (threads[0]) return f;
        return f.withBody(visit(f.body(), Map.of()));
    }

    private static Stmt visit(Stmt s, Map<Var, IntRange> env) {
        return new StmtRewriter() {
            @Override
            public Stmt visit(Stmt x) {
                return switch (x) {
                    case For f -> loop(f, env);
                    case Let l -> {
                        Stmt body = UnswitchGuards.visit(l.body(), PartitionLoops.withLet(env, l));
                        yield body == l.body() ? l : new Let(l.var(), l.value(), body);
                    }
                    case Seq q -> rewriteChildren(q) instanceof Seq y && y != q ? Seq.of(y.stmts()) : q;
                    default -> rewriteChildren(x);
                };
            }
        }.visit(s);
    }

    private static Stmt loop(For f, Map<Var, IntRange> env) {
        Map<Var, IntRange> inside = PartitionLoops.with(env, f.var(), PartitionLoops.loopRange(f, env));
        if (Stmts.size(f.body(), PartitionLoops.MAX_BODY_STMTS) > PartitionLoops.MAX_BODY_STMTS) {
            return f.withBody(visit(f.body(), inside));
        }
        if (f.kind() == ForKind.VECTORIZED) return f.withBody(visit(f.body(), inside));
        Found found = new Found();
        collect(f.body(), inside, new LinkedHashMap<>(), Set.of(), found);
        // a conjunct object met where it cannot be hoisted (or hoisted differently) is kept everywhere
        Set<Expr> gone = Collections.newSetFromMap(new IdentityHashMap<>());
        Set<Expr> conds = new LinkedHashSet<>();
        for (Expr c : found.order) {
            if (found.kept.contains(c)) continue;
            gone.add(c);
            conds.addAll(found.hoisted.get(c));
        }
        if (gone.isEmpty()) return f.withBody(visit(f.body(), inside));
        Expr cond = null;
        for (Expr c : conds) cond = cond == null ? c : cond.and(c);
        Stmt free = visit(drop(f.body(), gone), inside);
        return f.withBody(new IfThenElse(cond, free, f.body()));
    }

    /** The conjuncts met under a body: hoisted forms per conjunct object, and the objects that must stay. */
    private static final class Found {
        final Map<Expr, List<Expr>> hoisted = new IdentityHashMap<>();
        final List<Expr> order = new ArrayList<>(); // the hoisted conjuncts in program order (deterministic output)
        final Set<Expr> kept = Collections.newSetFromMap(new IdentityHashMap<>());
    }

    /**
     * Finds the hoistable guard conjuncts under {@code s}: {@code outer} are the ranges of the
     * loops and lets around the unswitched body, {@code inner} those of the loops inside it,
     * {@code innerLets} the lets inside it.
     */
    private static void collect(
            Stmt s, Map<Var, IntRange> outer, Map<Var, IntRange> inner, Set<Var> innerLets, Found out) {
        new StmtVisitor() {
            @Override
            public void visit(Stmt x) {
                switch (x) {
                    case For f -> {
                        var lo = PassSupport.constant(f.min());
                        var ext = PassSupport.constant(f.extent());
                        Map<Var, IntRange> in = new LinkedHashMap<>(inner);
                        if (lo.isPresent() && ext.isPresent() && ext.getAsLong() >= 1) {
                            in.put(f.var(), IntRange.ofExtent(lo.getAsLong(), ext.getAsLong()));
                        } else {
                            in.put(f.var(), null); // a loop of unknown range: guards using it stay
                        }
                        collect(f.body(), outer, in, innerLets, out);
                    }
                    case Let l -> {
                        Set<Var> lets = new java.util.HashSet<>(innerLets);
                        lets.add(l.var());
                        collect(l.body(), outer, inner, lets, out);
                    }
                    case IfThenElse i -> {
                        for (Expr c : PartitionLoops.conjuncts(i.cond())) {
                            Expr h = hoist(c, outer, inner, innerLets);
                            if (h == null) out.kept.add(c);
                            else
                                out.hoisted
                                        .computeIfAbsent(c, k -> {
                                            out.order.add(k);
                                            return new ArrayList<>();
                                        })
                                        .add(h);
                        }
                        visitChildren(i);
                    }
                    default -> visitChildren(x);
                }
            }
        }.visit(s);
    }

    /** The conjunct with the inner loops' variables at their hardest ends, or null when it cannot be hoisted. */
    private static Expr hoist(Expr c, Map<Var, IntRange> outer, Map<Var, IntRange> inner, Set<Var> innerLets) {
        if (!(c instanceof Compare cmp) || !cmp.a().dtype().isInt()) return null;
        if (cmp.op() == CompareOp.EQ || cmp.op() == CompareOp.NE) return null;
        boolean small = cmp.op() == CompareOp.LT || cmp.op() == CompareOp.LE; // holds when a - b is small
        for (Var v : innerLets) if (Exprs.uses(c, v)) return null;
        Map<Var, IntRange> all = new HashMap<>(outer);
        inner.forEach((v, r) -> {
            if (r != null) all.put(v, r);
        });
        if (PartitionLoops.mayDivideByZero(c, new ConstIntBound(all))) return null;
        Expr a = cmp.a(), b = cmp.b();
        boolean usedInner = false;
        for (Map.Entry<Var, IntRange> e : inner.entrySet()) {
            Var v = e.getKey();
            if (!Exprs.uses(a, v) && !Exprs.uses(b, v)) continue;
            if (e.getValue() == null) return null;
            PartitionLoops.Linear la = PartitionLoops.linear(a, v), lb = PartitionLoops.linear(b, v);
            if (la == null || lb == null) return null;
            long k;
            try {
                k = Math.subtractExact(la.k(), lb.k());
            } catch (ArithmeticException overflow) {
                return null;
            }
            long end = (k > 0) == small ? e.getValue().max() : e.getValue().min();
            Map<Var, Expr> at = Map.of(v, Literals.of(v.dtype(), end));
            a = Exprs.substitute(a, at);
            b = Exprs.substitute(b, at);
            usedInner = true;
        }
        if (!usedInner) return null;
        Expr h = new Simplifier().simplify(new Compare(cmp.op(), a, b));
        if (!(h instanceof Compare hc)) return null; // folded to a constant: left to PartitionLoops
        a = hc.a();
        b = hc.b();
        ConstIntBound bounds = new ConstIntBound(outer);
        IntRange ra = bounds.bound(a), rb = bounds.bound(b);
        IntRange full = IntRange.full(a.dtype());
        if (ra.equals(full) || rb.equals(full)) return h;
        long lo, hi; // a - b in [lo, hi]
        try {
            lo = Math.subtractExact(ra.min(), rb.max());
            hi = Math.subtractExact(ra.max(), rb.min());
        } catch (ArithmeticException overflow) {
            return h;
        }
        boolean alwaysTrue =
                switch (cmp.op()) {
                    case LT -> hi < 0;
                    case LE -> hi <= 0;
                    case GT -> lo > 0;
                    default -> lo >= 0;
                };
        boolean alwaysFalse =
                switch (cmp.op()) {
                    case LT -> lo >= 0;
                    case LE -> lo > 0;
                    case GT -> hi <= 0;
                    default -> hi < 0;
                };
        return alwaysTrue || alwaysFalse ? null : h;
    }

    /** Removes the given conjuncts (by identity) from every if in {@code body}. */
    private static Stmt drop(Stmt body, Set<Expr> gone) {
        return new StmtRewriter() {
            @Override
            public Stmt visit(Stmt s) {
                Stmt x = rewriteChildren(s);
                if (!(x instanceof IfThenElse i)) return x;
                Expr kept = null;
                boolean dropped = false;
                for (Expr c : PartitionLoops.conjuncts(i.cond())) {
                    if (gone.contains(c)) {
                        dropped = true;
                        continue;
                    }
                    kept = kept == null ? c : kept.and(c);
                }
                if (!dropped) return i;
                return kept == null ? i.then() : new IfThenElse(kept, i.then(), i.otherwise());
            }
        }.visit(body);
    }
}
