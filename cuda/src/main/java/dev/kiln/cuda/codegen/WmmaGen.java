package dev.kiln.cuda.codegen;

import dev.kiln.arith.Simplifier;
import dev.kiln.ir.Buffer;
import dev.kiln.ir.BufferLoad;
import dev.kiln.ir.DType;
import dev.kiln.ir.Expr;
import dev.kiln.ir.Exprs;
import dev.kiln.ir.IntImm;
import dev.kiln.ir.KilnException;
import dev.kiln.ir.MemoryScope;
import dev.kiln.ir.Var;
import dev.kiln.lower.GpuKernel;
import dev.kiln.schedule.CudaTensorIntrinsics;
import dev.kiln.schedule.TensorIntrinsic;
import dev.kiln.schedule.TensorIntrinsics;
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
 * The CUDA implementations of the Tensor Core intrinsics ({@link CudaTensorIntrinsics}), keyed by
 * name: a {@code tensorize$cuda.wmma...} nest (i, j, k loops of 16, k of 8 for TF32, around one accumulating store,
 * as the tensorize step checked it) becomes {@code nvcuda::wmma} fragment loads of A, B and the
 * accumulator C, one {@code mma_sync} and the accumulator's store, each operand read from the
 * nest's first element with its leading dimension (the distance of its rows, a constant of the
 * buffer's layout), between {@code __syncwarp()}s so that the lanes' plain stores and the
 * fragment's are visible to each other.
 *
 * <p>wmma is collective over a warp, so a kernel with a Tensor Core nest is <em>warp-level</em>:
 * each of the program's threads along {@code threadIdx.x} is a warp of 32 lanes (the launch's x
 * extent is 32 times the bindings', and the program's thread index is {@code threadIdx.x >> 5}).
 * The lanes of a warp run the rest of the kernel redundantly: stores of the same values, which is
 * correct; an accumulating store outside a Tensor Core nest would be applied 32 times, so such a
 * kernel is refused. C must live in shared or global memory (a fragment is stored to memory).
 */
final class WmmaGen {
    private WmmaGen() {}

    /** Lanes per program thread in a warp-level kernel. */
    static final int LANES = 32;

    /** Whether {@code kernel} holds a Tensor Core nest (and so runs a warp per program thread). */
    static boolean warpLevel(GpuKernel kernel) {
        boolean[] found = {false};
        new StmtVisitor() {
            @Override
            public void visit(Stmt s) {
                if (s instanceof Pragma p
                        && p.tensorIntrinsic() != null
                        && CudaTensorIntrinsics.ALL.contains(p.tensorIntrinsic())) found[0] = true;
                visitChildren(s);
            }
        }.visit(kernel.root());
        return found[0];
    }

    /**
     * Refuses a warp-level kernel whose lanes would not agree: an accumulating store outside a
     * Tensor Core nest, or more than the block's thread limit once every program thread is a warp.
     */
    static void checkWarpLevel(GpuKernel kernel, String where) {
        long threads = kernel.threadsPerBlock() * LANES;
        if (threads > 1024) {
            throw new KilnException(where + ": a Tensor Core kernel runs a warp per thread; "
                    + kernel.threadsPerBlock() + " threads per block make " + threads
                    + " lanes, over CUDA's 1024 (bind at most 32 threads per block)");
        }
        new StmtVisitor() {
            @Override
            public void visit(Stmt s) {
                if (s instanceof Pragma p && p.tensorIntrinsic() != null) return;
                if (s instanceof Store st) {
                    Exprs.forEach(st.value(), e -> {
                        if (e instanceof BufferLoad l
                                && l.buffer().base() == st.buffer().base()) {
                            throw new KilnException(
                                    where + ": the store to '" + st.buffer().name()
                                            + "' accumulates outside the Tensor Core nest, which each of a"
                                            + " warp's 32 lanes would repeat; tensorize that reduction too or"
                                            + " compute it in another kernel");
                        }
                    });
                }
                visitChildren(s);
            }
        }.visit(kernel.root());
    }

    /**
     * One Tensor Core nest as the tensorize step left it: its accumulating store, the store and
     * operand loads at the tile's first elements, the operands' leading dimensions.
     */
    private record Nest(
            String name,
            Store store,
            Store at0,
            List<BufferLoad> loads,
            DType inType,
            boolean bT,
            long lda,
            long ldb,
            long ldc,
            int depth) {
        /** The fragments' {@code m, n, k}: {@code 16, 16, depth}. */
        String shape() {
            return "16, 16, " + depth;
        }

        /** The A and B fragments' element type: the inputs' type, or {@code precision::tf32} for float32. */
        String fragmentType() {
            return inType == DType.FLOAT32 ? NS + "precision::tf32" : CudaTypes.name(inType);
        }

        Buffer c() {
            return store.buffer();
        }
    }

    /** Reads the nest under {@code p}, or throws naming the intrinsic and why it cannot be written. */
    private static Nest parse(Pragma p, String where0) {
        String name = p.tensorIntrinsic();
        String where = where0 + ": tensor intrinsic '" + name + "'";
        if (!CudaTensorIntrinsics.ALL.contains(name)) {
            throw new KilnException(
                    where + " has no CUDA implementation; the CUDA backend implements " + CudaTensorIntrinsics.ALL);
        }
        TensorIntrinsic in = TensorIntrinsics.get(name);
        List<Long> ext = in.loopExtents();
        List<For> loops = new ArrayList<>();
        Stmt s = p.body();
        while (s instanceof For f) {
            if (f.kind() != ForKind.SERIAL || !(f.extent() instanceof IntImm e) || e.value() != ext.get(loops.size())) {
                throw new KilnException(where + ": loop '" + f.var().name() + "' is not the pattern's loop "
                        + loops.size() + " (extent " + ext.get(loops.size()) + ", serial)");
            }
            loops.add(f);
            if (loops.size() == ext.size()) break;
            s = f.body();
        }
        if (loops.size() != ext.size() || !(loops.getLast().body() instanceof Store st)) {
            throw new KilnException(where + ": the nest is not " + ext.size() + " loops around one store");
        }
        Var vi = loops.get(0).var(), vj = loops.get(1).var(), vk = loops.get(2).var();
        Map<Var, Expr> zeros = new HashMap<>();
        for (For f : loops) zeros.put(f.var(), new IntImm(f.var().dtype(), 0));
        Store at0 = substitute(st, zeros); // the tile's first elements
        List<BufferLoad> loads = inputs(at0);
        if (loads.size() != 2) throw new KilnException(where + ": the nest reads " + loads.size() + " operands, not 2");
        DType inType = CudaTensorIntrinsics.inputType(name);
        Buffer a = loads.get(0).buffer(), b = loads.get(1).buffer(), c = st.buffer();
        if (a.dtype() != inType || b.dtype() != inType || c.dtype() != DType.FLOAT32) {
            throw new KilnException(where + ": operands " + a.name() + " " + a.dtype() + ", " + b.name() + " "
                    + b.dtype() + ", " + c.name() + " " + c.dtype() + "; the intrinsic takes " + inType + ", " + inType
                    + ", FLOAT32");
        }
        if (c.scope() == MemoryScope.LOCAL) {
            throw new KilnException(where + ": the accumulator '" + c.name() + "' is a thread's local array; a"
                    + " fragment is stored to shared or global memory (cache_write it to 'shared', or not at all)");
        }
        boolean bT = CudaTensorIntrinsics.bTransposed(name);
        long lda = stride(st, 0, vi, where, "A"), ldb = stride(st, 1, bT ? vj : vk, where, "B");
        long ldc = stride(st, -1, vi, where, "C");
        int perRow = 16 / inType.bytes(); // ldm: a multiple of 16 bytes
        check(where, "A", lda, perRow);
        check(where, "B", ldb, perRow);
        check(where, "C", ldc, 4);
        return new Nest(
                name, st, at0, loads, inType, bT, lda, ldb, ldc, ext.get(2).intValue());
    }

    /**
     * Writes the nest under {@code p} as wmma calls, or throws naming the intrinsic and why not.
     * With {@code acc} holding this nest, the accumulator is the warp's fragment {@code acc} keeps
     * across its loop; otherwise it is loaded from C and stored back around the one mma_sync.
     */
    static void emit(Pragma p, Accumulators acc, ExprGen g, CudaNames names, String where0, Consumer<String> line) {
        Nest n = parse(p, where0);
        String t = n.fragmentType();
        g.dtypes.add(n.inType());
        Buffer a = n.loads().get(0).buffer(), b = n.loads().get(1).buffer(), c = n.c();
        Expr slot = acc == null ? null : acc.slot(p);
        boolean kept = slot != null;
        line.accept("// " + p.key() + ": one warp's 16x16x" + n.depth() + " Tensor Core tile"
                + (kept ? ", accumulating in fragment registers" : ""));
        line.accept("{");
        line.accept("  __syncwarp();");
        line.accept(
                "  " + NS + "fragment<" + NS + "matrix_a, " + n.shape() + ", " + t + ", " + NS + "row_major> kiln_fa;");
        line.accept("  " + NS + "fragment<" + NS + "matrix_b, " + n.shape() + ", " + t + ", " + NS
                + (n.bT() ? "col_major" : "row_major") + "> kiln_fb;");
        String pa = "&" + names.buffer(a) + "[" + g.offset(a, n.loads().get(0).indices()) + "]";
        String pb = "&" + names.buffer(b) + "[" + g.offset(b, n.loads().get(1).indices()) + "]";
        line.accept("  " + NS + "load_matrix_sync(kiln_fa, " + pa + ", " + n.lda() + ");");
        line.accept("  " + NS + "load_matrix_sync(kiln_fb, " + pb + ", " + n.ldb() + ");");
        if (n.inType() == DType.FLOAT32) {
            // the fragments hold float32 values; the Tensor Cores take them rounded to TF32
            for (String f : List.of("kiln_fa", "kiln_fb")) {
                line.accept("  for (int kiln_t = 0; kiln_t < " + f + ".num_elements; ++kiln_t) " + f + ".x[kiln_t] = "
                        + NS + "__float_to_tf32(" + f + ".x[kiln_t]);");
            }
        }
        if (kept) {
            String f = ACC + "[" + g.index(slot) + "]";
            line.accept("  " + NS + "mma_sync(" + f + ", kiln_fa, kiln_fb, " + f + ");");
        } else {
            String pc = "&" + names.buffer(c) + "[" + g.offset(c, n.at0().indices()) + "]";
            line.accept("  " + NS + "fragment<" + NS + "accumulator, " + n.shape() + ", float> kiln_fc;");
            line.accept("  " + NS + "load_matrix_sync(kiln_fc, " + pc + ", " + n.ldc() + ", " + NS + "mem_row_major);");
            line.accept("  " + NS + "mma_sync(kiln_fc, kiln_fa, kiln_fb, kiln_fc);");
            line.accept(
                    "  " + NS + "store_matrix_sync(" + pc + ", kiln_fc, " + n.ldc() + ", " + NS + "mem_row_major);");
        }
        line.accept("  __syncwarp();");
        line.accept("}");
    }

    private static final String NS = "nvcuda::wmma::";
    private static final String ACC = "kiln_acc";

    /** Most accumulator fragments a warp keeps across a loop: 8 floats of each per lane, 128 registers. */
    static final int MAX_FRAGMENTS = 16;

    /**
     * Accumulators kept in fragment registers across {@code loop}: the Tensor Core nests inside it
     * (one, or the copies that unrolling made of it) accumulate into {@code tiles.length} tiles of
     * C, at {@code base}'s offset plus {@code tiles[s]} elements for fragment {@code s}. A nest's
     * tile moves only with its fragment loops (loops between {@code loop} and the nest, unrolled
     * when written); every other loop there, the reduction's, leaves it where it is. The fragments
     * are loaded from C before the loop, each mma_sync updates its own, and they are stored after
     * it: C's tiles cross memory once per loop instead of once per 16-deep step.
     */
    record Accumulators(
            String across,
            IdentityHashMap<Pragma, Expr> slots,
            Set<For> fragmentLoops,
            Store base,
            long[] tiles,
            long ldc,
            int depth) {
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
    static Accumulators accumulators(For loop, String where) {
        if (loop.kind() != ForKind.SERIAL && loop.kind() != ForKind.UNROLLED) return null;
        return analyse(loop.body(), loop.var(), "loop '" + loop.var().name() + "'", where);
    }

    /**
     * The accumulators that can stay in fragments across a run of Tensor Core nests that follow
     * one another (the copies a fully unrolled reduction leaves), or null; as for a loop.
     */
    static Accumulators accumulators(List<Stmt> run, String where) {
        return analyse(new Seq(List.copyOf(run)), null, "the " + run.size() + " Tensor Core steps that follow", where);
    }

    private static Accumulators analyse(Stmt body, Var loopVar, String across, String where) {
        List<Pragma> nests = new ArrayList<>();
        List<List<For>> paths = new ArrayList<>();
        Set<Var> bound = new HashSet<>();
        if (!collect(body, new ArrayList<>(), nests, paths, bound) || nests.isEmpty()) return null;
        List<Nest> parsed = new ArrayList<>();
        for (Pragma p : nests) {
            try {
                parsed.add(parse(p, where));
            } catch (KilnException e) {
                return null; // emit names the fault when it writes the nest
            }
        }
        Nest first = parsed.getFirst();
        Buffer c = first.c();
        for (Nest n : parsed) {
            if (n.c().base() != c.base() || n.ldc() != first.ldc() || n.depth() != first.depth()) return null;
        }
        if (touchesOutside(body, nests, c)) return null;
        Simplifier simp = new Simplifier();
        // each nest's fragment loops, and its tile's offset at their first values
        List<List<For>> fragments = new ArrayList<>();
        List<Expr> origins = new ArrayList<>();
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
            Map<Var, Expr> mins = new HashMap<>();
            for (For f : mine) mins.put(f.var(), f.min());
            origins.add(
                    Exprs.substitute(flat(new BufferLoad(c, parsed.get(x).at0().indices())), mins));
        }
        // every tile's offset from the first nest's first tile, per nest and value of its fragment loops
        Expr base = origins.getFirst();
        List<long[]> rels = new ArrayList<>();
        java.util.TreeSet<Long> tiles = new java.util.TreeSet<>();
        for (int x = 0; x < parsed.size(); x++) {
            long[] r = relativeOffsets(origins.get(x), base, parsed.get(x), fragments.get(x), c, simp);
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
        Map<Var, Expr> mins0 = new HashMap<>();
        for (For f : fragments.getFirst()) mins0.put(f.var(), f.min());
        Store base0 = substitute(first.at0(), mins0);
        return new Accumulators(across, slots, allFragmentLoops, base0, tileArray, first.ldc(), first.depth());
    }

    /**
     * The offsets of a nest's tiles from {@code base}, one per value of its fragment loops
     * (row-major over them, the last loop fastest), or null where one is not a constant.
     */
    private static long[] relativeOffsets(Expr origin, Expr base, Nest n, List<For> loops, Buffer c, Simplifier simp) {
        int count = 1;
        for (For f : loops) count *= (int) ((IntImm) f.extent()).value();
        long[] out = new long[count];
        int[] digits = new int[loops.size()];
        Expr at0 = flat(new BufferLoad(c, n.at0().indices()));
        for (int s = 0; s < count; s++) {
            Map<Var, Expr> at = new HashMap<>();
            for (int q = 0; q < loops.size(); q++) {
                For f = loops.get(q);
                at.put(f.var(), new IntImm(f.var().dtype(), ((IntImm) f.min()).value() + digits[q]));
            }
            Expr d = simp.simplify(Exprs.substitute(at0, at).sub(base));
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
        Set<Long> cells = new HashSet<>();
        for (long off : tiles) {
            for (int r = 0; r < 16; r++) {
                for (int col = 0; col < 16; col++) if (!cells.add(off + r * ldc + col)) return false;
            }
        }
        return true;
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
                    collect(f.body(), new ArrayList<>(), inside, new ArrayList<>(), bound);
                    return inside.isEmpty();
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
                collect(i.then(), new ArrayList<>(), inside, new ArrayList<>(), new HashSet<>());
                if (i.otherwise() != null) {
                    collect(i.otherwise(), new ArrayList<>(), inside, new ArrayList<>(), new HashSet<>());
                }
                return inside.isEmpty();
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
     * Whether the iterations of {@code loop}, in a warp-level kernel, can be shared among the warp's
     * 32 lanes instead of every lane running all of them: a serial or unrolled loop whose body
     * stores to one shared buffer (a cooperative fetch, say) and does nothing else but loops,
     * conditions and lets: one store statement, whose value and conditions read no element of the
     * buffer, no barrier, no Tensor Core nest, no allocation. Such a store belongs to a stage that
     * is not a reduction, whose loops write each element of it once, so the iterations are
     * independent; the lanes' stores are made visible to the whole warp by a {@code __syncwarp()}
     * after the loop, since the rest of the kernel reads them redundantly.
     */
    static boolean laneSplit(For loop) {
        if (loop.kind() != ForKind.SERIAL && loop.kind() != ForKind.UNROLLED) return false;
        List<Store> stores = new ArrayList<>();
        boolean[] other = {false};
        Stmts.forEachStmt(loop.body(), x -> {
            switch (x) {
                case Store st -> stores.add(st);
                case For f -> {}
                case IfThenElse i -> {}
                case Let l -> {}
                case Seq q -> {}
                default -> other[0] = true; // a barrier, a pragma, an allocation, an evaluation
            }
        });
        if (other[0] || stores.size() != 1) return false;
        Buffer dst = stores.getFirst().buffer();
        if (dst.scope() != MemoryScope.SHARED) return false;
        boolean[] reads = {false};
        Stmts.forEachExprNode(loop.body(), e -> {
            if (e instanceof BufferLoad l && l.buffer().base() == dst.base()) reads[0] = true;
        });
        return !reads[0];
    }

    /**
     * Opens the fragments of {@code acc} before its loop: a barrier of the warp (the lanes' plain
     * stores to C must be visible to the collective loads), the fragment array, one load per tile.
     */
    static void loadAccumulators(Accumulators acc, ExprGen g, CudaNames names, Consumer<String> line) {
        line.accept(
                "// C's " + acc.count() + " tile(s) of this warp kept in fragment registers across " + acc.across());
        line.accept("__syncwarp();");
        line.accept(NS + "fragment<" + NS + "accumulator, 16, 16, " + acc.depth() + ", float> " + ACC + "["
                + acc.count() + "];");
        for (int s = 0; s < acc.count(); s++) {
            line.accept(NS + "load_matrix_sync(" + ACC + "[" + s + "], " + tile(acc, s, g, names) + ", " + acc.ldc()
                    + ", " + NS + "mem_row_major);");
        }
    }

    /** Stores the fragments of {@code acc} back to C after its loop, then a barrier of the warp. */
    static void storeAccumulators(Accumulators acc, ExprGen g, CudaNames names, Consumer<String> line) {
        for (int s = 0; s < acc.count(); s++) {
            line.accept(NS + "store_matrix_sync(" + tile(acc, s, g, names) + ", " + ACC + "[" + s + "], " + acc.ldc()
                    + ", " + NS + "mem_row_major);");
        }
        line.accept("__syncwarp();");
    }

    /** The address of fragment {@code s}'s tile of C. */
    private static String tile(Accumulators acc, int s, ExprGen g, CudaNames names) {
        Buffer c = acc.base().buffer();
        String off = g.offset(c, acc.base().indices());
        long rel = acc.tiles()[s];
        return "&" + names.buffer(c) + "[" + (rel == 0 ? off : "(" + off + ") + " + rel) + "]";
    }

    private static void check(String where, String operand, long ld, int multiple) {
        if (ld <= 0 || ld % multiple != 0) {
            throw new KilnException(where + ": operand " + operand + "'s rows are " + ld
                    + " elements apart; wmma needs a positive multiple of " + multiple + " (16 bytes)");
        }
    }

    /** The store with {@code map}'s variables replaced (the nest's loop variables stay as they are). */
    private static Store substitute(Store st, Map<Var, Expr> map) {
        return (Store) Stmts.substitute(st, map);
    }

    private static List<BufferLoad> inputs(Store st) {
        List<BufferLoad> out = new ArrayList<>();
        Exprs.forEach(st.value(), e -> {
            if (e instanceof BufferLoad l && l.buffer().base() != st.buffer().base()) out.add(l);
        });
        return out;
    }

    /** How many elements apart operand {@code which} (0: A, 1: B, -1: the store) is when {@code v} grows by one. */
    private static long stride(Store st, int which, Var v, String where, String operand) {
        Map<Var, Expr> one = new HashMap<>();
        one.put(v, new IntImm(v.dtype(), 1));
        Map<Var, Expr> zero = new HashMap<>();
        zero.put(v, new IntImm(v.dtype(), 0));
        Expr d = flat(pick(substitute(st, one), which)).sub(flat(pick(substitute(st, zero), which)));
        Expr r = new Simplifier().simplify(d);
        if (!(r instanceof IntImm c)) {
            throw new KilnException(where + ": operand " + operand + "'s leading dimension is not a constant: "
                    + dev.kiln.ir.ExprPrinter.print(r));
        }
        return c.value();
    }

    private static BufferLoad pick(Store st, int which) {
        return which < 0
                ? new BufferLoad(st.buffer(), st.indices())
                : inputs(st).get(which);
    }

    private static Expr flat(BufferLoad l) {
        List<Expr> strides = l.buffer().strides();
        Expr off = null;
        for (int d = 0; d < l.indices().size(); d++) {
            Expr idx = l.indices().get(d);
            Expr stride = strides.get(d).dtype() == idx.dtype()
                    ? strides.get(d)
                    : strides.get(d).cast(idx.dtype());
            Expr term = idx.mul(stride);
            off = off == null ? term : off.add(term);
        }
        return off;
    }
}
