package dev.kiln.cuda.codegen;

import dev.kiln.arith.Simplifier;
import dev.kiln.ir.Buffer;
import dev.kiln.ir.BufferLoad;
import dev.kiln.ir.DType;
import dev.kiln.ir.Expr;
import dev.kiln.ir.Exprs;
import dev.kiln.ir.IntImm;
import dev.kiln.ir.KilnException;
import dev.kiln.ir.Var;
import dev.kiln.tir.Allocate;
import dev.kiln.tir.For;
import dev.kiln.tir.ForKind;
import dev.kiln.tir.IfThenElse;
import dev.kiln.tir.Let;
import dev.kiln.tir.Pragma;
import dev.kiln.tir.Seq;
import dev.kiln.tir.Stmt;
import dev.kiln.tir.StmtVisitor;
import dev.kiln.tir.Stmts;
import dev.kiln.tir.Store;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;

/**
 * A warp's Tensor Core accumulators kept in fragment registers across a loop or a run of nests
 * ({@code across} names it; the code generator's split of {@link WmmaGen}, which writes each nest):
 * the nests inside it (one, or the copies that unrolling made of it) accumulate into
 * {@code tiles.length} tiles of C, at {@code base}'s offset plus {@code tiles[s]} elements for
 * fragment {@code s}. A nest's tile moves only with its fragment loops (loops between the loop and
 * the nest, unrolled when written); every other loop there, the reduction's, leaves it where it is. The fragments
 * are loaded from C before the loop, each mma_sync updates its own, and they are stored after
 * it: C's tiles cross memory once per loop instead of once per 16-deep step.
 */
record WmmaAccumulators(
        String across,
        IdentityHashMap<Pragma, Expr> slots,
        Set<For> fragmentLoops,
        Store base,
        long[] tiles,
        long ldc,
        int depth) {
    /** The fragment array's name in the kernel. */
    static final String ARRAY = "kiln_acc";

    /** Most accumulator fragments a warp keeps across a loop: 8 floats of each per lane, 128 registers. */
    static final int MAX_FRAGMENTS = 16;

    /** The fragment nest {@code p} updates, from its fragment loops' variables; null for another nest. */
    Expr slot(Pragma p) {
        return slots.get(p);
    }

    boolean fragmentLoop(For f) {
        return fragmentLoops.contains(f);
    }

    int count() {
        return tiles.length;
    }

    /**
     * The accumulators that can stay in fragments across {@code loop}, or null: the loop is serial
     * or unrolled and holds Tensor Core nests, each reached through serial or unrolled loops,
     * sequences and lets only (no condition, no thread loop); nothing else in it reads or writes
     * their C; each nest's tile depends on no variable bound inside the loop but constant-extent
     * loops around it (its fragment loops) and lies a constant distance from every other nest's;
     * the tiles do not overlap, there are at most {@link #MAX_FRAGMENTS} of them, and each nest's
     * fragment is an affine function of its loops' variables.
     */
    static WmmaAccumulators across(For loop, String where) {
        if (loop.kind() != ForKind.SERIAL && loop.kind() != ForKind.UNROLLED) return null;
        return analyse(loop.body(), loop.var(), "loop '" + loop.var().name() + "'", where);
    }

    /**
     * The accumulators that can stay in fragments across a run of Tensor Core nests that follow
     * one another (the copies a fully unrolled reduction leaves), or null; as for a loop.
     */
    static WmmaAccumulators across(List<Stmt> run, String where) {
        return analyse(new Seq(List.copyOf(run)), null, "the " + run.size() + " Tensor Core steps that follow", where);
    }

    private static WmmaAccumulators analyse(Stmt body, Var loopVar, String across, String where) {
        List<Pragma> nests = new ArrayList<>();
        List<List<For>> paths = new ArrayList<>();
        Set<Var> bound = new HashSet<>();
        if (!collect(body, new ArrayList<>(), nests, paths, bound) || nests.isEmpty()) return null;
        List<WmmaGen.Nest> parsed = new ArrayList<>();
        for (Pragma p : nests) {
            try {
                parsed.add(WmmaGen.parse(p, where));
            } catch (KilnException e) {
                return null; // emit names the fault when it writes the nest
            }
        }
        WmmaGen.Nest first = parsed.getFirst();
        Buffer c = first.c();
        for (WmmaGen.Nest n : parsed) {
            if (n.c().base() != c.base() || n.ldc() != first.ldc() || n.depth() != first.depth()) return null;
        }
        if (touchesOutside(body, nests, c)) return null;
        Simplifier simp = new Simplifier();
        // each nest's fragment loops, and its tile's offset at their first values
        List<List<For>> fragments = new ArrayList<>();
        Set<For> allFragmentLoops = java.util.Collections.newSetFromMap(new IdentityHashMap<>());
        for (int x = 0; x < parsed.size(); x++) {
            long combos = 1;
            Set<Var> used = new HashSet<>();
            for (Expr e : parsed.get(x).at0().indices())
                Exprs.forEach(e, y -> {
                    if (y instanceof Var v) used.add(v);
                });
            if (loopVar != null && used.contains(loopVar)) return null;
            List<For> mine = new ArrayList<>();
            for (For f : paths.get(x)) {
                if (!used.contains(f.var())) continue;
                if (!(f.min() instanceof IntImm) || !(f.extent() instanceof IntImm e) || e.value() < 1) return null;
                mine.add(f);
                combos *= e.value();
                if (combos > MAX_FRAGMENTS) return null;
            }
            for (Var v : used) {
                if (bound.contains(v) && mine.stream().noneMatch(f -> f.var() == v)) return null;
            }
            fragments.add(mine);
            allFragmentLoops.addAll(mine);
        }
        // every tile's offset from the first nest's first tile, per nest and value of its fragment loops
        Map<Var, Expr> mins = new HashMap<>();
        for (For f : fragments.getFirst()) mins.put(f.var(), f.min());
        Store base = WmmaGen.substitute(first.at0(), mins);
        Expr origin = WmmaGen.flat(new BufferLoad(c, base.indices()));
        List<long[]> rels = new ArrayList<>();
        java.util.TreeSet<Long> tiles = new java.util.TreeSet<>();
        for (int x = 0; x < parsed.size(); x++) {
            long[] r = relativeOffsets(origin, parsed.get(x), fragments.get(x), c, simp);
            if (r == null) return null;
            rels.add(r);
            for (long t : r) tiles.add(t);
            if (tiles.size() > MAX_FRAGMENTS) return null;
        }
        long[] tileArray = tiles.stream().mapToLong(Long::longValue).toArray();
        if (!disjoint(tileArray, first.ldc())) return null;
        IdentityHashMap<Pragma, Expr> slots = new IdentityHashMap<>();
        for (int x = 0; x < parsed.size(); x++) {
            Expr slot = slotExpr(rels.get(x), tileArray, fragments.get(x), simp);
            if (slot == null) return null;
            slots.put(nests.get(x), slot);
        }
        return new WmmaAccumulators(across, slots, allFragmentLoops, base, tileArray, first.ldc(), first.depth());
    }

    /**
     * The offsets of a nest's tiles from {@code origin}, one per value of its fragment loops
     * (row-major over them, the last loop fastest), or null where one is not a constant.
     */
    private static long[] relativeOffsets(Expr origin, WmmaGen.Nest n, List<For> loops, Buffer c, Simplifier simp) {
        int count = 1;
        for (For f : loops) count *= (int) ((IntImm) f.extent()).value();
        long[] out = new long[count];
        int[] digits = new int[loops.size()];
        Expr at0 = WmmaGen.flat(new BufferLoad(c, n.at0().indices()));
        for (int s = 0; s < count; s++) {
            Map<Var, Expr> at = new HashMap<>();
            for (int q = 0; q < loops.size(); q++) {
                For f = loops.get(q);
                at.put(f.var(), new IntImm(f.var().dtype(), ((IntImm) f.min()).value() + digits[q]));
            }
            Expr d = simp.simplify(Exprs.substitute(at0, at).sub(origin));
            if (!(d instanceof IntImm k)) return null;
            out[s] = k.value();
            for (int q = loops.size() - 1; q >= 0; q--) {
                if (++digits[q] < ((IntImm) loops.get(q).extent()).value()) break;
                digits[q] = 0;
            }
        }
        return out;
    }

    /** Whether 16 x 16 tiles at these offsets (rows {@code ldc} apart) share no element. */
    private static boolean disjoint(long[] tiles, long ldc) {
        return addCells(tiles, ldc, new HashSet<>());
    }

    /** Adds the elements of 16 x 16 tiles at these offsets (rows {@code ldc} apart); false if one was there. */
    private static boolean addCells(long[] tiles, long ldc, Set<Long> cells) {
        boolean fresh = true;
        for (long off : tiles) {
            for (int r = 0; r < 16; r++) {
                for (int col = 0; col < 16; col++) fresh &= cells.add(off + r * ldc + col);
            }
        }
        return fresh;
    }

    /**
     * A nest's fragment index as {@code s0 + sum a_q (v_q - min_q)} over its fragment loops, or
     * null where the fragments its tiles fall on are not such a function of the loops.
     */
    private static Expr slotExpr(long[] rel, long[] tiles, List<For> loops, Simplifier simp) {
        int[] slot = new int[rel.length];
        for (int s = 0; s < rel.length; s++) slot[s] = java.util.Arrays.binarySearch(tiles, rel[s]);
        long[] radix = new long[loops.size()];
        long r = 1;
        for (int q = loops.size() - 1; q >= 0; q--) {
            radix[q] = r;
            r *= ((IntImm) loops.get(q).extent()).value();
        }
        long[] a = new long[loops.size()];
        for (int q = 0; q < loops.size(); q++) {
            a[q] = ((IntImm) loops.get(q).extent()).value() > 1 ? slot[(int) radix[q]] - slot[0] : 0;
        }
        for (int s = 0; s < rel.length; s++) {
            long want = slot[0], rest = s;
            for (int q = 0; q < loops.size(); q++) {
                want += a[q] * (rest / radix[q]);
                rest %= radix[q];
            }
            if (want != slot[s]) return null;
        }
        DType t = loops.isEmpty() ? DType.INT32 : loops.getFirst().var().dtype();
        Expr out = new IntImm(t, slot[0]);
        for (int q = 0; q < loops.size(); q++) {
            if (a[q] == 0) continue;
            For f = loops.get(q);
            Expr term = f.var().sub(f.min()).mul(new IntImm(f.var().dtype(), a[q]));
            out = out.add(term.dtype() == t ? term : term.cast(t));
        }
        return simp.simplify(out);
    }

    /**
     * Collects the Tensor Core nests under {@code s} and their loops; false where a nest lies under a
     * thread loop, a vectorized loop or a condition.
     */
    private static boolean collect(Stmt s, List<For> path, List<Pragma> nests, List<List<For>> paths, Set<Var> bound) {
        switch (s) {
            case Pragma p
            when p.tensorIntrinsic() != null -> {
                nests.add(p);
                paths.add(List.copyOf(path));
                return true;
            }
            case Pragma p -> {
                return collect(p.body(), path, nests, paths, bound);
            }
            case For f -> {
                bound.add(f.var());
                if (f.kind() != ForKind.SERIAL && f.kind() != ForKind.UNROLLED) {
                    // a cooperative fetch bound to a thread axis again is harmless; a nest under one is not kept
                    List<Pragma> inside = new ArrayList<>();
                    boolean ok = collect(f.body(), new ArrayList<>(), inside, new ArrayList<>(), bound);
                    return ok && inside.isEmpty();
                }
                path.add(f);
                boolean ok = collect(f.body(), path, nests, paths, bound);
                path.removeLast();
                return ok;
            }
            case Let l -> {
                bound.add(l.var());
                return collect(l.body(), path, nests, paths, bound);
            }
            case Seq q -> {
                for (Stmt x : q.stmts()) if (!collect(x, path, nests, paths, bound)) return false;
                return true;
            }
            case Allocate a -> {
                return collect(a.body(), path, nests, paths, bound);
            }
            case IfThenElse i -> {
                // a condition around a nest would leave some tiles unloaded or out of bounds; elsewhere it is harmless
                List<Pragma> inside = new ArrayList<>();
                boolean ok = collect(i.then(), new ArrayList<>(), inside, new ArrayList<>(), new HashSet<>());
                if (i.otherwise() != null) {
                    ok &= collect(i.otherwise(), new ArrayList<>(), inside, new ArrayList<>(), new HashSet<>());
                }
                return ok && inside.isEmpty();
            }
            default -> {
                return true; // a store, a barrier, an evaluation
            }
        }
    }

    /** Whether a statement under {@code s} other than the nests reads or writes {@code c}. */
    private static boolean touchesOutside(Stmt s, List<Pragma> nests, Buffer c) {
        boolean[] found = {false};
        new StmtVisitor() {
            @Override
            public void visit(Stmt x) {
                if (found[0]) return;
                for (Pragma p : nests) if (x == p) return;
                if (!(x instanceof Seq)
                        && !(x instanceof For)
                        && !(x instanceof Let)
                        && !(x instanceof Allocate)
                        && !(x instanceof Pragma)
                        && Stmts.touches(x, c)) {
                    found[0] = true;
                    return;
                }
                visitChildren(x);
            }
        }.visit(s);
        return found[0];
    }

    /**
     * Whether {@code init} writes zero to exactly the elements of these tiles and to nothing else:
     * a nest of constant loops around one store of 0 to C (the reduction's initialisation, which
     * lowering puts right before its update), the store's offset from the first tile an affine
     * function of the loops' variables with constant coefficients, its elements those of the tiles.
     * The fragments can then start as zeros ({@code fill_fragment}) and the nest go: C is not
     * written and read back before the reduction.
     */
    boolean zeroedBy(Stmt init) {
        List<For> loops = new ArrayList<>();
        Stmt s = init;
        long points = 1;
        while (s instanceof For f) {
            if (f.kind() != ForKind.SERIAL && f.kind() != ForKind.UNROLLED && f.kind() != ForKind.VECTORIZED)
                return false;
            if (!(f.min() instanceof IntImm) || !(f.extent() instanceof IntImm e) || e.value() < 1) return false;
            points *= e.value();
            if (points > 256L * count()) return false;
            loops.add(f);
            s = f.body();
        }
        if (!(s instanceof Store st)
                || st.buffer().base() != base.buffer().base()
                || !(st.value() instanceof dev.kiln.ir.FloatImm z && z.value() == 0)
                || points != 256L * count()) {
            return false;
        }
        Simplifier simp = new Simplifier();
        Expr origin = WmmaGen.flat(new BufferLoad(base.buffer(), base.indices()));
        Expr d = simp.simplify(
                WmmaGen.flat(new BufferLoad(st.buffer(), st.indices())).sub(origin));
        Map<Var, Expr> zeros = new HashMap<>();
        for (For f : loops) zeros.put(f.var(), new IntImm(f.var().dtype(), 0));
        if (!(simp.simplify(Exprs.substitute(d, zeros)) instanceof IntImm c0)) return false;
        long[] coeff = new long[loops.size()];
        Expr affine = new IntImm(d.dtype(), c0.value());
        for (int q = 0; q < loops.size(); q++) {
            Var v = loops.get(q).var();
            Map<Var, Expr> one = new HashMap<>(zeros);
            one.put(v, new IntImm(v.dtype(), 1));
            if (!(simp.simplify(Exprs.substitute(d, one)) instanceof IntImm c1)) return false;
            coeff[q] = c1.value() - c0.value();
            Expr term = v.mul(new IntImm(v.dtype(), coeff[q]));
            affine = affine.add(term.dtype() == d.dtype() ? term : term.cast(d.dtype()));
        }
        if (!(simp.simplify(d.sub(affine)) instanceof IntImm r) || r.value() != 0) return false;
        Set<Long> cells = new HashSet<>();
        addCells(tiles, ldc, cells);
        int[] digits = new int[loops.size()];
        for (long p = 0; p < points; p++) {
            long off = c0.value();
            for (int q = 0; q < loops.size(); q++) {
                off += coeff[q] * (((IntImm) loops.get(q).min()).value() + digits[q]);
            }
            if (!cells.remove(off)) return false;
            for (int q = loops.size() - 1; q >= 0; q--) {
                if (++digits[q] < ((IntImm) loops.get(q).extent()).value()) break;
                digits[q] = 0;
            }
        }
        return cells.isEmpty();
    }

    /**
     * Opens the fragments before their loop: a barrier of the warp (the lanes' plain
     * stores to C must be visible to the collective loads), the fragment array, one load per tile;
     * or, where the tiles start as zeros ({@link #zeroedBy}), one fill per tile.
     */
    void load(ExprGen g, CudaNames names, Consumer<String> line, boolean zeros) {
        line.accept("// C's " + count() + " tile(s) of this warp kept in fragment registers across " + across()
                + (zeros ? ", starting from zeros" : ""));
        if (!zeros) line.accept("__syncwarp();");
        line.accept(WmmaGen.NS + "fragment<" + WmmaGen.NS + "accumulator, 16, 16, " + depth() + ", float> " + ARRAY
                + "[" + count() + "];");
        for (int s = 0; s < count(); s++) {
            line.accept(
                    zeros
                            ? WmmaGen.NS + "fill_fragment(" + ARRAY + "[" + s + "], 0.0f);"
                            : WmmaGen.NS + "load_matrix_sync(" + ARRAY + "[" + s + "], " + tile(s, g, names) + ", "
                                    + ldc() + ", " + WmmaGen.NS + "mem_row_major);");
        }
    }

    /** Whether C is a shared-memory tile of the block (the matmul of a fused epilogue), not global memory. */
    boolean inSharedMemory() {
        return base.buffer().scope() == dev.kiln.ir.MemoryScope.SHARED;
    }

    /** Stores the fragments back to C after their loop, then a barrier of the warp. */
    void store(ExprGen g, CudaNames names, Consumer<String> line) {
        for (int s = 0; s < count(); s++) {
            line.accept(WmmaGen.NS + "store_matrix_sync(" + tile(s, g, names) + ", " + ARRAY + "[" + s + "], " + ldc()
                    + ", " + WmmaGen.NS + "mem_row_major);");
        }
        line.accept("__syncwarp();");
    }

    /** The address of fragment {@code s}'s tile of C. */
    private String tile(int s, ExprGen g, CudaNames names) {
        Buffer c = base.buffer();
        String off = g.offset(c, base.indices());
        long rel = tiles[s];
        return "&" + names.buffer(c) + "[" + (rel == 0 ? off : "(" + off + ") + " + rel) + "]";
    }
}
