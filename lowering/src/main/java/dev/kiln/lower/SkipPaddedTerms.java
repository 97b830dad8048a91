package dev.kiln.lower;

import dev.kiln.arith.IntRange;
import dev.kiln.arith.Simplifier;
import dev.kiln.ir.And;
import dev.kiln.ir.Binary;
import dev.kiln.ir.BinaryOp;
import dev.kiln.ir.Buffer;
import dev.kiln.ir.BufferLoad;
import dev.kiln.ir.Cast;
import dev.kiln.ir.DType;
import dev.kiln.ir.Expr;
import dev.kiln.ir.Exprs;
import dev.kiln.ir.FloatImm;
import dev.kiln.ir.IntImm;
import dev.kiln.ir.Literals;
import dev.kiln.ir.Not;
import dev.kiln.ir.Select;
import dev.kiln.ir.Var;
import dev.kiln.tir.Allocate;
import dev.kiln.tir.Barrier;
import dev.kiln.tir.Evaluate;
import dev.kiln.tir.For;
import dev.kiln.tir.ForKind;
import dev.kiln.tir.IfThenElse;
import dev.kiln.tir.Let;
import dev.kiln.tir.Pragma;
import dev.kiln.tir.PrimFunc;
import dev.kiln.tir.Seq;
import dev.kiln.tir.Stmt;
import dev.kiln.tir.StmtRewriter;
import dev.kiln.tir.StmtVisitor;
import dev.kiln.tir.Stmts;
import dev.kiln.tir.Store;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * Reduction terms that multiply by zero padding are skipped, as oneDNN's convolutions skip the taps that fall in
 * the padding. A padded copy ({@code pad[j, k, c] = select(1 <= j && j < 15 && ..., data[j - 1, ...], 0)}, stored
 * once in the function) is zero wherever its condition is false, so an update {@code acc[...] = acc[...] + pad[j.2 +
 * rh, ...] * w[...]} adds nothing there. Each conjunct of the condition, read at the update's index, becomes a
 * guard around the body of the innermost loop whose variable it uses (or of a loop further in on the way to the
 * update), where that body holds no other store and at least {@link #MIN_GUARDED_WORK} executions of the update
 * (a vectorized loop counted once):
 *
 * <pre>
 * for j.2 in 0..14 {                               for j.2 in 0..14 {
 *   for rh in 0..3 {                                 for rh in 0..3 {
 *     for rw in 0..3 {                     =&gt;          if (j.2 + rh &gt;= 1 &amp;&amp; j.2 + rh &lt; 15) {
 *       for rc in 0..128 {                                 for rw in 0..3 { ... }
 *         for k.3 in 0..14 { ... }                       }
 * </pre>
 *
 * <p>A conjunct whose innermost loop is a loop of the register tile (too little work under it for a branch, such
 * as the 14 pixels of a row tile against the column taps {@code k.3 + rw}) and which uses one other variable, of a
 * loop of at most {@link #MAX_PEELED} iterations around it ({@code rw}), peels that loop instead: one copy per value,
 * and in each copy the tile loop runs only over the run of values where the conjunct holds, so the unrolled tile
 * simply has fewer pixels at the borders ({@code for rw = 0: k.3 in 1..14; rw = 1: 0..14; rw = 2: 0..13}).
 *
 * <p>For a 3 x 3 convolution with padding 1 the skipped taps are 2 of 42 per padded dimension on a 14 x 14 image
 * (5%), 2 of 21 on 7 x 7 (10%).
 *
 * <p>Only for fast-math targets ({@link Lowering#pipeline(dev.kiln.target.Target)}): skipping {@code 0 * w} is exact
 * for finite {@code w} (adding a zero product leaves the sum as it was) but drops the NaN that an infinite or NaN
 * weight times zero gives. The padded buffer must be allocated in the function, stored by exactly one statement
 * whose value is a {@code select} with a literal zero arm and whose indices are its loop variables (plus terms
 * free of them), and read as a factor of the update's increment (through casts); anything else is left alone.
 */
public final class SkipPaddedTerms {
    private SkipPaddedTerms() {}

    /** The fewest executions of the update (a vectorized loop counted once) a guard must be able to skip. */
    static final long MIN_GUARDED_WORK = 16;

    /** The most iterations a loop may have to be peeled for the tile loops inside it. */
    static final long MAX_PEELED = 8;

    public static PrimFunc apply(PrimFunc f) {
        return apply(f, true);
    }

    /**
     * The pass, with or without the split of loops at their borders for conjuncts of three variables ({@code
     * Context.partition}); without it, as before that split existed (for same-process comparisons).
     */
    public static PrimFunc apply(PrimFunc f, boolean partitionBorders) {
        Context cx = new Context();
        cx.partition = partitionBorders;
        cx.collect(f.body());
        if (cx.padded.isEmpty()) return f;
        Plan plan = new Plan();
        cx.findUpdates(f.body(), plan);
        if (!plan.partitions.isEmpty()) {
            // the loops of three-variable conjuncts split at their borders first; then everything planned again on
            // the new body, where each border copy's conjunct has two variables left (and the interior's none)
            f = f.withBody(new Partition(plan.partitions).visit(f.body()));
            cx = new Context();
            cx.partition = false;
            cx.collect(f.body());
            plan = new Plan();
            cx.findUpdates(f.body(), plan);
        }
        if (plan.guards.isEmpty() && plan.peels.isEmpty()) return f;
        return f.withBody(new Apply(plan).visit(f.body()));
    }

    /**
     * What to do: guards on loop bodies, and the loops to peel with, for each tile loop inside one, the conjuncts
     * of the peeled loop's variable and the tile loop's that narrow the tile loop's range in each copy.
     */
    private static final class Plan {
        final Map<For, Set<Expr>> guards = new IdentityHashMap<>();
        final Map<For, Map<For, Set<Expr>>> peels = new IdentityHashMap<>();
        /** Loops split at their borders: for each, the values where some conjunct may fail (the rest are runs). */
        final Map<For, TreeSet<Long>> partitions = new IdentityHashMap<>();
    }

    /**
     * Splits each loop of a plan's partitions into one copy per border value (the value substituted) and a loop
     * over each run of values between them, in order.
     */
    private static final class Partition extends StmtRewriter {
        final Map<For, TreeSet<Long>> borders;

        Partition(Map<For, TreeSet<Long>> borders) {
            this.borders = borders;
        }

        @Override
        public Stmt visit(Stmt x) {
            if (!(x instanceof For l) || !borders.containsKey(l)) return rewriteChildren(x);
            Stmt body = visit(l.body());
            long lo = PassSupport.constant(l.min()).getAsLong();
            long end = lo + PassSupport.constant(l.extent()).getAsLong();
            DType t = l.var().dtype();
            List<Stmt> pieces = new ArrayList<>();
            long run = lo;
            for (long v = lo; v <= end; v++) {
                boolean border = v < end && borders.get(l).contains(v);
                if (!border && v < end) continue;
                if (v > run) {
                    pieces.add(
                            new For(l.var(), Literals.of(t, run), Literals.of(t, v - run), l.kind(), l.thread(), body));
                }
                if (border) pieces.add(Stmts.substitute(body, l.var(), Literals.of(t, v)));
                run = v + 1;
            }
            return Seq.of(pieces);
        }
    }

    /** Applies a plan: the guards, and each peeled loop as one copy per value with its tile loops narrowed. */
    private static final class Apply extends StmtRewriter {
        final Plan plan;
        /** The tile loops' ranges in the copy being made ({min, extent}; extent 0: dropped), or null outside one. */
        Map<For, long[]> clip;

        Apply(Plan plan) {
            this.plan = plan;
        }

        @Override
        public Stmt visit(Stmt x) {
            if (!(x instanceof For l)) return rewriteChildren(x);
            if (clip == null && plan.peels.containsKey(l)) return peel(l);
            long[] range = clip == null ? null : clip.get(l);
            if (range != null && range[1] == 0) return Seq.empty();
            Stmt body = visit(l.body());
            if (plan.guards.containsKey(l)) {
                Expr cond = null;
                for (Expr c : plan.guards.get(l)) cond = cond == null ? c : new And(cond, c);
                body = IfThenElse.of(cond, body);
            }
            if (range == null) return l.withBody(body);
            DType t = l.var().dtype();
            return new For(l.var(), Literals.of(t, range[0]), Literals.of(t, range[1]), l.kind(), l.thread(), body);
        }

        private Stmt peel(For p) {
            long lo = PassSupport.constant(p.min()).getAsLong();
            long ext = PassSupport.constant(p.extent()).getAsLong();
            List<Stmt> copies = new ArrayList<>();
            for (long v = lo; v < lo + ext; v++) {
                Expr value = Literals.of(p.var().dtype(), v);
                clip = new IdentityHashMap<>();
                for (var e : plan.peels.get(p).entrySet()) {
                    long[] r = narrowed(e.getKey(), e.getValue(), p.var(), value);
                    if (r != null) clip.put(e.getKey(), r);
                }
                Stmt body = visit(p.body());
                clip = null;
                copies.add(Stmts.substitute(body, p.var(), value));
            }
            return Seq.of(copies);
        }
    }

    /**
     * The values of tile loop {@code k} for which every conjunct holds with {@code p = value}, as {min, extent} (extent
     * 0 when none does); null when that is the whole range, not one run, or not decided by the two values.
     */
    private static long[] narrowed(For k, Set<Expr> conjuncts, Var p, Expr value) {
        long lo = PassSupport.constant(k.min()).getAsLong();
        long ext = PassSupport.constant(k.extent()).getAsLong();
        long first = -1, last = -1;
        for (long v = lo; v < lo + ext; v++) {
            Map<Var, Expr> at = Map.of(p, value, k.var(), Literals.of(k.var().dtype(), v));
            boolean holds = true;
            for (Expr c : conjuncts) {
                Expr r = new Simplifier().simplify(Exprs.substitute(c, at));
                if (!(r instanceof IntImm b)) return null;
                holds &= b.value() != 0;
            }
            if (!holds) continue;
            if (first < 0) first = v;
            else if (last != v - 1) return null; // two runs
            last = v;
        }
        if (first < 0) return new long[] {lo, 0};
        if (first == lo && last == lo + ext - 1) return null;
        return new long[] {first, last - first + 1};
    }

    /** A padded buffer's one store, the loops around it, and the condition under which its value may be non-zero. */
    private record Padding(Store store, List<For> loops, Expr nonZero) {}

    private static final class Context {
        final Map<Buffer, Padding> padded = new IdentityHashMap<>();
        /** Variables bound by a let anywhere (conditions using them are not moved). */
        final Set<Var> lets = new HashSet<>();
        /** Whether a conjunct of three variables may split a loop at its borders ({@link #partition}). */
        boolean partition = true;

        void collect(Stmt body) {
            Set<Buffer> allocated = Collections.newSetFromMap(new IdentityHashMap<>());
            Map<Buffer, Integer> storeCount = new IdentityHashMap<>();
            Map<Buffer, Padding> candidate = new IdentityHashMap<>();
            new StmtVisitor() {
                final List<For> loops = new ArrayList<>();

                @Override
                public void visit(Stmt x) {
                    switch (x) {
                        case Allocate a -> allocated.add(a.buffer());
                        case Let l -> lets.add(l.var());
                        case Store s -> {
                            storeCount.merge(s.buffer().base(), 1, Integer::sum);
                            Expr nz = nonZero(s.value());
                            if (nz != null && s.buffer() == s.buffer().base()) {
                                candidate.put(s.buffer(), new Padding(s, List.copyOf(loops), nz));
                            }
                        }
                        default -> {}
                    }
                    if (x instanceof For l) {
                        loops.add(l);
                        visitChildren(x);
                        loops.removeLast();
                    } else {
                        visitChildren(x);
                    }
                }
            }.visit(body);
            candidate.forEach((b, p) -> {
                if (allocated.contains(b) && storeCount.get(b) == 1) padded.put(b, p);
            });
        }

        /** Walks to every update, recording the guards and peels its padded factors allow on the loops around it. */
        void findUpdates(Stmt body, Plan plan) {
            new StmtVisitor() {
                final List<For> loops = new ArrayList<>();
                /** How many of {@link #loops} are outside the tensorized nest being walked ({@code -1}: none). */
                int nest = -1;

                @Override
                public void visit(Stmt x) {
                    if (x instanceof For l) {
                        loops.add(l);
                        visitChildren(x);
                        loops.removeLast();
                    } else if (x instanceof Pragma p && p.tensorIntrinsic() != null && nest < 0) {
                        nest = loops.size();
                        visitChildren(x);
                        nest = -1;
                    } else if (x instanceof Store st) {
                        update(st, loops, nest < 0 ? loops.size() : nest, plan);
                    } else {
                        visitChildren(x);
                    }
                }
            }.visit(body);
        }

        /**
         * An update under {@code loops}, the first {@code outside} of them outside any tensorized nest: a nest is one
         * instruction over its whole tile, whose loops no guard, peel or split may change (a pair of bfloat16 channels
         * of which the second is padding is still one {@code vdpbf16ps} step), so a conjunct that uses a nest's loop
         * is not moved (the instruction multiplies the padding's zeros), and the others are placed outside the nest.
         */
        private void update(Store st, List<For> loops, int outside, Plan plan) {
            Expr inc = st.increment();
            if (inc == null) return;
            List<BufferLoad> factors = new ArrayList<>();
            factors(inc, factors);
            for (BufferLoad ld : factors) {
                Padding p = padded.get(ld.buffer());
                if (p == null || p.store().buffer() == st.buffer()) continue;
                Expr nz = readAt(p, ld, loops);
                if (nz != null) place(st, p, nz, loops, outside, plan);
            }
        }

        /**
         * The padding's non-zero condition at the element {@code ld} reads: each of the store's own loop variables
         * replaced by the read's index less the store index's other terms. Null when the store's indices or the
         * condition do not allow it.
         */
        Expr readAt(Padding p, BufferLoad ld, List<For> readLoops) {
            Set<Var> common = Collections.newSetFromMap(new IdentityHashMap<>());
            for (For l : p.loops()) for (For r : readLoops) if (r == l) common.add(l.var());
            Set<Var> own = Collections.newSetFromMap(new IdentityHashMap<>());
            for (For l : p.loops()) if (!common.contains(l.var())) own.add(l.var());
            Map<Var, Expr> at = new HashMap<>();
            List<Expr> idx = p.store().indices();
            for (int d = 0; d < idx.size(); d++) {
                Expr i = idx.get(d);
                Var v = null;
                Expr rest = null;
                boolean minus = false;
                if (i instanceof Var x && own.contains(x)) v = x;
                else if (i instanceof Binary b && (b.op() == BinaryOp.ADD || b.op() == BinaryOp.SUB)) {
                    if (b.a() instanceof Var x && own.contains(x)) {
                        v = x;
                        rest = b.b();
                        minus = b.op() == BinaryOp.SUB;
                    } else if (b.op() == BinaryOp.ADD && b.b() instanceof Var x && own.contains(x)) {
                        v = x;
                        rest = b.a();
                    }
                }
                if (v == null) {
                    if (usesAny(i, own)) return null;
                    continue;
                }
                if (at.containsKey(v) || (rest != null && usesAny(rest, own))) return null;
                Expr read = ld.indices().get(d);
                if (read.dtype() != v.dtype()) return null;
                at.put(v, rest == null ? read : minus ? read.add(rest) : read.sub(rest));
            }
            for (Var v : own) if (Exprs.uses(p.nonZero(), v) && !at.containsKey(v)) return null;
            return Exprs.substitute(p.nonZero(), at);
        }

        /** Adds a guard for each conjunct of {@code nz} at the loop that can hold it, if any. */
        void place(Store update, Padding pad, Expr nz, List<For> loops, int outside, Plan plan) {
            Map<Var, IntRange> ranges = new HashMap<>();
            for (For l : loops) {
                var lo = PassSupport.constant(l.min());
                var ext = PassSupport.constant(l.extent());
                if (lo.isPresent() && ext.isPresent() && ext.getAsLong() >= 1) {
                    ranges.put(l.var(), IntRange.ofExtent(lo.getAsLong(), ext.getAsLong()));
                }
            }
            Simplifier simp = new Simplifier(ranges);
            List<Expr> conjuncts = PartitionLoops.conjuncts(nz);
            for (Expr c0 : conjuncts) {
                Expr c = simp.simplify(c0);
                if (c instanceof IntImm b && b.value() != 0) continue; // always true here
                int innermost = -1;
                boolean movable = true;
                for (Var v : vars(c)) {
                    if (lets.contains(v)) movable = false;
                    for (int i = 0; i < loops.size(); i++)
                        if (loops.get(i).var() == v) innermost = Math.max(innermost, i);
                }
                if (!movable || innermost < 0 || innermost >= outside) continue;
                boolean placed = false;
                for (int i = innermost; i < outside && !placed; i++) {
                    For l = loops.get(i);
                    if (l.kind() == ForKind.VECTORIZED || l.kind() == ForKind.THREAD_BOUND) break;
                    if (work(loops, i) < MIN_GUARDED_WORK) break;
                    if (onlyStore(l.body(), update)) {
                        plan.guards
                                .computeIfAbsent(l, k -> new LinkedHashSet<>())
                                .add(c);
                        placed = true;
                    }
                }
                if (!placed && vars(c).size() == 3) partition(update, pad, c, innermost, loops, ranges, plan);
                else if (!placed) peel(update, c, innermost, loops, plan);
            }
        }

        /**
         * A conjunct of a tile loop {@code k} and two loops around it ({@code k.2 * 7 + k.3 + rw} of a row tile split
         * in two, against the column taps): the outer of the two, {@code q}, is split at its borders, the values where
         * the conjunct may fail for some value of the others, into one copy each ({@link Partition}); in those copies
         * the conjunct has two variables and the peel of the inner one, {@code p}, narrows the tile. The runs between
         * the borders keep their loop (the conjunct holds there). Only where that peel will follow ({@link
         * #peelable}), {@code q} has at most {@link #MAX_BORDERS} borders, the copies stay within {@link
         * PartitionLoops#MAX_BODY_STMTS}, and the padded copy is not stored inside {@code q} (copying its one store
         * would end the skip).
         */
        void partition(
                Store update,
                Padding pad,
                Expr c,
                int innermost,
                List<For> loops,
                Map<Var, IntRange> ranges,
                Plan plan) {
            if (!partition) return;
            For k = loops.get(innermost);
            Set<Var> vs = vars(c);
            List<For> around = new ArrayList<>();
            for (int i = 0; i < innermost; i++) if (vs.contains(loops.get(i).var())) around.add(loops.get(i));
            if (around.size() != 2) return;
            For q = around.get(0), p = around.get(1);
            if (!serialConstant(k) || !serialConstant(q) || !onlyStore(k.body(), update) || !peelable(p)) return;
            boolean[] storesPad = {false};
            Stmts.forEachStmt(q.body(), x -> storesPad[0] |= x == pad.store());
            if (storesPad[0]) return;
            long lo = PassSupport.constant(q.min()).getAsLong();
            long ext = PassSupport.constant(q.extent()).getAsLong();
            Map<Var, IntRange> others = new HashMap<>(ranges);
            others.remove(q.var());
            Simplifier simp = new Simplifier(others);
            TreeSet<Long> borders = new TreeSet<>();
            for (long v = lo; v < lo + ext; v++) {
                Expr r = simp.simplify(
                        Exprs.substitute(c, Map.of(q.var(), Literals.of(q.var().dtype(), v))));
                if (!(r instanceof IntImm b && b.value() != 0)) borders.add(v);
            }
            TreeSet<Long> all = new TreeSet<>(borders);
            if (plan.partitions.containsKey(q)) all.addAll(plan.partitions.get(q));
            if (borders.isEmpty() || all.size() > MAX_BORDERS) return;
            long pieces = 2L * all.size() + 1;
            if (pieces * Stmts.size(q.body(), PartitionLoops.MAX_BODY_STMTS) > PartitionLoops.MAX_BODY_STMTS) return;
            plan.partitions.put(q, all);
        }

        /**
         * A conjunct of a tile loop {@code k} (too little work under it for a branch) and one loop {@code p} around it
         * of a few iterations: {@code p} is peeled, and in each copy {@code k} runs only where the conjunct holds.
         */
        void peel(Store update, Expr c, int innermost, List<For> loops, Plan plan) {
            For k = loops.get(innermost);
            Set<Var> vs = vars(c);
            if (vs.size() != 2 || !serialConstant(k) || !onlyStore(k.body(), update)) return;
            For p = null;
            for (int i = 0; i < innermost; i++) if (vs.contains(loops.get(i).var())) p = loops.get(i);
            if (p == null || !peelable(p)) return;
            plan.peels
                    .computeIfAbsent(p, x -> new IdentityHashMap<>())
                    .computeIfAbsent(k, x -> new LinkedHashSet<>())
                    .add(c);
        }
    }

    /** The most border values a loop may be split at for a conjunct of three variables ({@code Context.partition}). */
    static final long MAX_BORDERS = 4;

    /** A constant loop, serial or unrolled: one that a peel or a split at its borders may copy. */
    private static boolean serialConstant(For l) {
        return isConstantLoop(l) && (l.kind() == ForKind.SERIAL || l.kind() == ForKind.UNROLLED);
    }

    /** Whether {@code p} may be peeled: {@link #serialConstant}, at most {@link #MAX_PEELED} copies of a small body. */
    private static boolean peelable(For p) {
        if (!serialConstant(p)) return false;
        long ext = PassSupport.constant(p.extent()).getAsLong();
        return ext <= MAX_PEELED
                && ext * Stmts.size(p.body(), PartitionLoops.MAX_BODY_STMTS) <= PartitionLoops.MAX_BODY_STMTS;
    }

    /** The executions of the update under loop {@code i}'s body: the product of the inner loops' extents. */
    private static long work(List<For> loops, int i) {
        long n = 1;
        for (int j = i + 1; j < loops.size(); j++) {
            For l = loops.get(j);
            if (l.kind() == ForKind.VECTORIZED) continue;
            var ext = PassSupport.constant(l.extent());
            if (ext.isEmpty()) return Long.MAX_VALUE;
            n = Math.multiplyExact(n, Math.max(1, ext.getAsLong()));
        }
        return n;
    }

    /** Whether {@code l} has a constant min and a constant extent of at least 1. */
    private static boolean isConstantLoop(For l) {
        return PassSupport.constant(l.min()).isPresent()
                && PassSupport.constant(l.extent()).isPresent()
                && PassSupport.constant(l.extent()).getAsLong() >= 1;
    }

    /**
     * Whether {@code update} is all {@code s} does: no other store, and no call, barrier or allocation (an intrinsic's
     * call may write memory) that skipping the body would skip too.
     */
    private static boolean onlyStore(Stmt s, Store update) {
        boolean[] other = {false};
        Stmts.forEachStmt(
                s,
                x -> other[0] |= (x instanceof Store st && st != update)
                        || x instanceof Evaluate
                        || x instanceof Barrier
                        || x instanceof Allocate);
        return !other[0];
    }

    /** When a stored value may be non-zero: {@code c} for {@code select(c, x, 0)}, not c for select(c, 0, x). */
    private static Expr nonZero(Expr value) {
        if (!(value instanceof Select sel)) return null;
        if (isZero(sel.f()) && !isZero(sel.t())) return sel.cond();
        if (isZero(sel.t()) && !isZero(sel.f())) return new Not(sel.cond());
        return null;
    }

    private static boolean isZero(Expr e) {
        return (e instanceof FloatImm x && x.value() == 0) || (e instanceof IntImm i && i.value() == 0);
    }

    /** The loads that multiply the whole of {@code e}: factors of products, through casts. */
    private static void factors(Expr e, List<BufferLoad> out) {
        switch (e) {
            case BufferLoad l -> out.add(l);
            case Cast c -> factors(c.value(), out);
            case Binary b
            when b.op() == BinaryOp.MUL -> {
                factors(b.a(), out);
                factors(b.b(), out);
            }
            default -> {}
        }
    }

    private static Set<Var> vars(Expr e) {
        Set<Var> out = new LinkedHashSet<>();
        Exprs.forEach(e, x -> {
            if (x instanceof Var v) out.add(v);
        });
        return out;
    }

    private static boolean usesAny(Expr e, Set<Var> vs) {
        for (Var v : vs) if (Exprs.uses(e, v)) return true;
        return false;
    }
}
