package dev.kiln.lower;

import dev.kiln.arith.ConstIntBound;
import dev.kiln.arith.IntRange;
import dev.kiln.ir.And;
import dev.kiln.ir.Binary;
import dev.kiln.ir.Compare;
import dev.kiln.ir.CompareOp;
import dev.kiln.ir.Expr;
import dev.kiln.ir.Exprs;
import dev.kiln.ir.IntImm;
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
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Loop partition: a loop whose body is guarded ({@code if ((i.0 * 4 + i.1) < 15)}, the guard a
 * split that does not divide leaves) is split into the part of its range where every guard
 * mentioning its variable is provably true, which loses those guards, and the parts before
 * (head) and after (tail) it, which keep them:
 *
 * <pre>
 * for i.0 in 0..4 {                     for i.0 in 0..3 {
 *   for i.1 in 0..4 {                     for i.1 in 0..4 {
 *     if ((i.0 * 4 + i.1) &lt; 15) {    =>     A[i.0 * 4 + i.1] = ...
 *       A[i.0 * 4 + i.1] = ...            }
 *                                        }
 *                                        for i.0' in 3..3 + 1 {     (tail: keeps the guard;
 *                                          for i.1 in 0..4 {          its own inner loops are
 *                                            if (...) { ... }         partitioned in turn)
 * </pre>
 *
 * <p>Which loops: those of constant min and extent that are not thread-bound (a thread-bound
 * loop defines the launch shape), whose body holds at least one {@code if} condition conjunct
 * mentioning the loop variable. Every such conjunct must be an integer comparison ({@code < <=
 * > >=}) affine in the loop variable, {@code k * v + rest}, where {@code rest} may be anything
 * free of v; otherwise the loop is left alone (its inner loops are still partitioned). A
 * conjunct is provably true for a value of v when it holds for every value the other variables
 * can take ({@link ConstIntBound} over the ranges of the enclosing loops, the loops between the
 * loop and the guard, and let-bound integers), neither side of the comparison can wrap, and it
 * holds no integer division whose divisor may be zero (dropping it would hide that error).
 *
 * <p>All parts keep the loop's kind (a parallel loop gives parallel parts). The middle part
 * keeps the loop's variable; the head and tail get fresh copies. Inner loops of every part are
 * partitioned in turn with the part's narrowed range, so a tail iteration's inner loop splits
 * into a guard-free part and one whose guard is false (the next simplify removes it). A loop
 * whose body has more than {@link #MAX_BODY_STMTS} statements is not copied.
 */
public final class PartitionLoops {
    /** Bodies larger than this (statements) are not partitioned, to bound code growth. */
    public static final long MAX_BODY_STMTS = 2048;

    private PartitionLoops() {}

    public static PrimFunc apply(PrimFunc f) {
        return f.withBody(visit(f.body(), Map.of()));
    }

    /** Rewrites {@code s}, knowing the ranges {@code env} of the enclosing loop and let variables. */
    private static Stmt visit(Stmt s, Map<Var, IntRange> env) {
        return new StmtRewriter() {
            @Override
            public Stmt visit(Stmt x) {
                return switch (x) {
                    case For f -> loop(f, env);
                    case Let l -> {
                        Stmt body = PartitionLoops.visit(l.body(), withLet(env, l));
                        yield body == l.body() ? l : new Let(l.var(), l.value(), body);
                    }
                    case Seq q -> rewriteChildren(q) instanceof Seq y && y != q ? Seq.of(y.stmts()) : q;
                    default -> rewriteChildren(x);
                };
            }
        }.visit(s);
    }

    private static Stmt loop(For f, Map<Var, IntRange> env) {
        var lo = PassSupport.constant(f.min());
        var ext = PassSupport.constant(f.extent());
        if (lo.isEmpty() || ext.isEmpty() || ext.getAsLong() < 1) {
            Stmt body = visit(f.body(), with(env, f.var(), loopRange(f, env)));
            return f.withBody(body);
        }
        IntRange full;
        try {
            full = IntRange.ofExtent(lo.getAsLong(), ext.getAsLong());
        } catch (ArithmeticException overflow) {
            return f.withBody(visit(f.body(), env));
        }
        boolean eligible = f.kind() != ForKind.THREAD_BOUND
                && ext.getAsLong() > 1
                && Stmts.size(f.body(), MAX_BODY_STMTS) <= MAX_BODY_STMTS;
        IntRange main = eligible ? provable(f, full, env) : null;
        if (main == null) {
            IntRange live = eligible ? liveRange(f, full, env) : null;
            if (live == null) return f.withBody(visit(f.body(), with(env, f.var(), full)));
            return guarded(f, full, false, env);
        }

        List<Stmt> parts = new ArrayList<>();
        if (main.min() > full.min()) parts.add(guarded(f, IntRange.of(full.min(), main.min() - 1), true, env));
        parts.add(part(f, main, dropGuards(f.body(), f.var()), false, env));
        if (main.max() < full.max()) parts.add(guarded(f, IntRange.of(main.max() + 1, full.max()), true, env));
        return Seq.of(parts);
    }

    /**
     * A part over {@code r} that keeps its guards, cut where a guard conjunct mentioning the loop
     * variable is provably false from some value on (or up to some value): the last block of a
     * register tile with a row tail ({@code 96 + m.1 * 6 + m.2 < 100}, {@code m.1} in 0..1) is
     * neither guard-free nor dead anywhere, but {@code m.1 = 0} is live and {@code m.1 = 1} dead,
     * so the inner {@code m.2} loop of the live part, seeing {@code m.1} in 0..0, splits into 4
     * guard-free rows and 2 dead ones: the tail becomes its own tile with fewer rows instead of a
     * full tile with a guard per row (which keeps LLVM from holding its accumulators in
     * registers). The parts keep every guard; the dead ones simplify away.
     */
    private static Stmt guarded(For f, IntRange r, boolean freshVar, Map<Var, IntRange> env) {
        IntRange live = r.max() > r.min() ? liveRange(f, r, env) : r;
        if (live == null || live.equals(r)) return part(f, r, f.body(), freshVar, env);
        List<Stmt> parts = new ArrayList<>();
        if (live.min() > r.min()) parts.add(part(f, IntRange.of(r.min(), live.min() - 1), f.body(), true, env));
        parts.add(part(f, live, f.body(), freshVar, env));
        if (live.max() < r.max()) parts.add(part(f, IntRange.of(live.max() + 1, r.max()), f.body(), true, env));
        return Seq.of(parts);
    }

    /**
     * {@code r} less its longest prefix and suffix on which some guard conjunct mentioning the loop
     * variable is provably false; null when nothing is cut or every value is (the loop is left whole).
     */
    private static IntRange liveRange(For f, IntRange r, Map<Var, IntRange> env) {
        List<Guard> guards = new ArrayList<>();
        collect(f.body(), with(env, f.var(), r), guards);
        long lo = r.min(), hi = r.max();
        for (Guard g : guards) {
            if (!Exprs.uses(g.cond(), f.var())) continue;
            // as for the guard-free part: every conjunct on the variable an affine comparison, or no cut
            if (trueRange(g.cond(), f.var(), g.ranges()) == null || !(g.cond() instanceof Compare c)) return null;
            CompareOp negated =
                    switch (c.op()) {
                        case LT -> CompareOp.GE;
                        case LE -> CompareOp.GT;
                        case GT -> CompareOp.LE;
                        case GE -> CompareOp.LT;
                        case EQ, NE -> null;
                    };
            if (negated == null) continue;
            IntRange dead = trueRange(new Compare(negated, c.a(), c.b()), f.var(), g.ranges());
            if (dead == null || dead == NEVER) continue;
            IntRange d = r.intersect(dead);
            if (d == null) continue;
            if (d.max() >= hi && d.min() <= hi) hi = Math.min(hi, d.min() - 1);
            if (d.min() <= lo && d.max() >= lo) lo = Math.max(lo, d.max() + 1);
        }
        if (lo > hi || (lo == r.min() && hi == r.max())) return null;
        return IntRange.of(lo, hi);
    }

    /** One part of a partitioned loop, over {@code r}, its inner loops partitioned in turn. */
    private static Stmt part(For f, IntRange r, Stmt body, boolean freshVar, Map<Var, IntRange> env) {
        Var v = f.var();
        if (freshVar) {
            v = f.var().copy();
            body = Stmts.substitute(body, f.var(), v);
        }
        Stmt inner = visit(body, with(env, v, r));
        return new For(
                v,
                Literals.of(v.dtype(), r.min()),
                Literals.of(v.dtype(), r.max() - r.min() + 1),
                f.kind(),
                f.thread(),
                inner);
    }

    /**
     * The largest range of the loop variable within {@code full} where every guard conjunct
     * mentioning it is provably true; null when there is no such conjunct, when one is not an
     * affine comparison, or when the range is empty.
     */
    private static IntRange provable(For f, IntRange full, Map<Var, IntRange> env) {
        List<Guard> guards = new ArrayList<>();
        collect(f.body(), with(env, f.var(), full), guards);
        IntRange r = full;
        boolean any = false;
        for (Guard g : guards) {
            if (!Exprs.uses(g.cond(), f.var())) continue;
            any = true;
            IntRange t = trueRange(g.cond(), f.var(), g.ranges());
            if (t == null) return null;
            r = r.intersect(t);
            if (r == null) return null;
        }
        return any ? r : null;
    }

    /** A guard conjunct and the ranges known where it is evaluated (the loop variable's included). */
    private record Guard(Expr cond, Map<Var, IntRange> ranges) {}

    private static void collect(Stmt s, Map<Var, IntRange> env, List<Guard> out) {
        new StmtVisitor() {
            @Override
            public void visit(Stmt x) {
                switch (x) {
                    case For f -> collect(f.body(), with(env, f.var(), loopRange(f, env)), out);
                    case Let l -> collect(l.body(), withLet(env, l), out);
                    case IfThenElse i -> {
                        for (Expr c : conjuncts(i.cond())) out.add(new Guard(c, env));
                        visitChildren(i);
                    }
                    default -> visitChildren(x);
                }
            }
        }.visit(s);
    }

    /**
     * The values of {@code v} for which {@code cond} holds whatever values the other variables
     * take in {@code ranges} ({@code v}'s own range there serves the no-wrap check). Null when
     * the conjunct is not an affine comparison in v; {@link #NEVER} when no value is provable.
     */
    private static IntRange trueRange(Expr cond, Var v, Map<Var, IntRange> ranges) {
        if (!(cond instanceof Compare c) || !c.a().dtype().isInt()) return null;
        ConstIntBound bounds = new ConstIntBound(ranges);
        IntRange fullType = IntRange.full(c.a().dtype());
        if (bounds.bound(c.a()).equals(fullType) || bounds.bound(c.b()).equals(fullType)) return NEVER;
        if (mayDivideByZero(cond, bounds)) return NEVER; // dropping it would hide the runtime error
        Linear la = linear(c.a(), v), lb = linear(c.b(), v);
        if (la == null || lb == null) return null;
        try {
            long k = Math.subtractExact(la.k(), lb.k());
            IntRange ra = la.rest() == null ? IntRange.single(0) : bounds.bound(la.rest());
            IntRange rb = lb.rest() == null ? IntRange.single(0) : bounds.bound(lb.rest());
            if (ra.equals(fullType) || rb.equals(fullType)) return NEVER;
            // a - b = k * v + rest, rest in [rmin, rmax]
            long rmin = Math.subtractExact(ra.min(), rb.max()), rmax = Math.subtractExact(ra.max(), rb.min());
            return switch (c.op()) {
                case LT -> atMost(k, Math.subtractExact(-1, rmax)); // k*v + rmax <= -1
                case LE -> atMost(k, Math.negateExact(rmax)); // k*v + rmax <= 0
                case GT -> atLeast(k, Math.subtractExact(1, rmin)); // k*v + rmin >= 1
                case GE -> atLeast(k, Math.negateExact(rmin)); // k*v + rmin >= 0
                case EQ, NE -> null;
            };
        } catch (ArithmeticException overflow) {
            return NEVER;
        }
    }

    static boolean mayDivideByZero(Expr e, ConstIntBound bounds) {
        boolean[] trap = {false};
        Exprs.forEach(e, x -> {
            if (x instanceof Binary b
                    && b.op().integerOnly()
                    && bounds.bound(b.b()).contains(0)) trap[0] = true;
        });
        return trap[0];
    }

    /** A range no loop reaches: intersecting with it leaves nothing. */
    private static final IntRange NEVER = IntRange.single(Long.MAX_VALUE);

    private static final IntRange ALL = IntRange.of(Long.MIN_VALUE, Long.MAX_VALUE - 1);

    /** The v with {@code k * v <= c}. */
    private static IntRange atMost(long k, long c) {
        if (k == 0) return c >= 0 ? ALL : NEVER;
        if (k > 0) return IntRange.of(Long.MIN_VALUE, Math.floorDiv(c, k));
        return IntRange.of(ceilDiv(c, k), Long.MAX_VALUE - 1);
    }

    /** The v with {@code k * v >= c}. */
    private static IntRange atLeast(long k, long c) {
        if (k == 0) return c <= 0 ? ALL : NEVER;
        if (k > 0) return IntRange.of(ceilDiv(c, k), Long.MAX_VALUE - 1);
        return IntRange.of(Long.MIN_VALUE, Math.floorDiv(c, k));
    }

    private static long ceilDiv(long a, long b) {
        return Math.negateExact(Math.floorDiv(Math.negateExact(a), b));
    }

    /** {@code k * v + rest}; a null rest is zero. */
    record Linear(long k, Expr rest) {}

    /** The affine form of {@code e} in {@code v}, or null when {@code e} is not affine in it. */
    static Linear linear(Expr e, Var v) {
        if (e == v) return new Linear(1, null);
        if (!Exprs.uses(e, v)) return new Linear(0, e);
        if (!(e instanceof Binary b)) return null;
        switch (b.op()) {
            case ADD, SUB -> {
                Linear x = linear(b.a(), v), y = linear(b.b(), v);
                if (x == null || y == null) return null;
                boolean add = b.op() == dev.kiln.ir.BinaryOp.ADD;
                long k = add ? Math.addExact(x.k(), y.k()) : Math.subtractExact(x.k(), y.k());
                Expr rest;
                if (y.rest() == null) rest = x.rest();
                else if (x.rest() == null) rest = add ? y.rest() : y.rest().neg();
                else rest = add ? x.rest().add(y.rest()) : x.rest().sub(y.rest());
                return new Linear(k, rest);
            }
            case MUL -> {
                Expr other;
                long c;
                if (b.a() instanceof IntImm ca) {
                    c = ca.value();
                    other = b.b();
                } else if (b.b() instanceof IntImm cb) {
                    c = cb.value();
                    other = b.a();
                } else return null;
                Linear x = linear(other, v);
                if (x == null) return null;
                return new Linear(
                        Math.multiplyExact(x.k(), c),
                        x.rest() == null
                                ? null
                                : x.rest().mul(Literals.of(x.rest().dtype(), c)));
            }
            default -> {
                return null;
            }
        }
    }

    /** The conjuncts of a condition ({@code a && b && c}). */
    static List<Expr> conjuncts(Expr cond) {
        List<Expr> out = new ArrayList<>();
        addConjuncts(cond, out);
        return out;
    }

    private static void addConjuncts(Expr e, List<Expr> out) {
        if (e instanceof And a) {
            addConjuncts(a.a(), out);
            addConjuncts(a.b(), out);
        } else {
            out.add(e);
        }
    }

    /** Removes from every if in {@code body} the conjuncts that mention {@code v} (all proven true). */
    private static Stmt dropGuards(Stmt body, Var v) {
        return new StmtRewriter() {
            @Override
            public Stmt visit(Stmt s) {
                Stmt x = rewriteChildren(s);
                if (!(x instanceof IfThenElse i)) return x;
                Expr kept = null;
                boolean dropped = false;
                for (Expr c : conjuncts(i.cond())) {
                    if (Exprs.uses(c, v)) {
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

    static IntRange loopRange(For f, Map<Var, IntRange> env) {
        ConstIntBound b = new ConstIntBound(env);
        IntRange m = b.bound(f.min()), e = b.bound(f.extent());
        if (e.max() < 1) return null;
        try {
            IntRange r = IntRange.of(m.min(), Math.addExact(m.max(), e.max() - 1));
            return r.within(IntRange.full(f.var().dtype())) ? r : null;
        } catch (ArithmeticException overflow) {
            return null;
        }
    }

    static Map<Var, IntRange> withLet(Map<Var, IntRange> env, Let l) {
        if (!l.value().dtype().isInt()) return env;
        IntRange r = new ConstIntBound(env).bound(l.value());
        return r.equals(IntRange.full(l.value().dtype())) ? env : with(env, l.var(), r);
    }

    static Map<Var, IntRange> with(Map<Var, IntRange> env, Var v, IntRange r) {
        Map<Var, IntRange> m = new HashMap<>(env);
        if (r == null) m.remove(v);
        else m.put(v, r);
        return m;
    }
}
