package dev.kiln.schedule;

import dev.kiln.ir.Binary;
import dev.kiln.ir.Cast;
import dev.kiln.ir.Expr;
import dev.kiln.ir.ExprPrinter;
import dev.kiln.ir.IntImm;
import dev.kiln.ir.IterVar;
import dev.kiln.ir.Reduce;
import dev.kiln.ir.TensorRead;
import dev.kiln.ir.Var;
import dev.kiln.te.ComputeOp;
import dev.kiln.te.Tensor;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

/**
 * The checks of {@link TensorizeStep}: the loops from the tensorized one inward are the pattern's
 * loops (count, kinds, extents, no annotation, nothing computed inside, each the innermost part of
 * one original axis whose splits on the way to it divide, so no guard falls inside; tails of other
 * splits are guarded outside the nest, {@link ScheduleLowering}), the stage's body is the
 * pattern's body (same operators, casts, dtypes and reducer, one tensor read per pattern operand),
 * and every operand's element offset over the whole tile is the pattern's (its layout), at the
 * first, second and last tile of every axis, with the tile's first element aligned as declared (a tile of more than
 * {@link #EXHAUSTIVE} points, a chained AMX intrinsic's, at every point along each loop and at seeded random ones).
 * Loops whose extents are still undecided (a sketch) are checked when the state is lowered.
 */
final class TensorizeCheck {
    /**
     * The layout check's outcomes by stage operation (held weakly; "" when the layout is the pattern's, else the
     * refusal). The check reads only the operation, the intrinsic, the axes the tensorized loops come from and which
     * operands live in shrunk buffers ({@link Layout#shrunk}), never a split factor or the loop order, so the search's
     * replays, which re-check a tensorized stage after most steps and lower every candidate, compute it once per key.
     */
    private static final Map<ComputeOp, Map<String, String>> LAYOUTS =
            java.util.Collections.synchronizedMap(new java.util.WeakHashMap<>());

    private TensorizeCheck() {}

    /** Throws a {@link ScheduleException} with the reason unless the nest at {@code uid} matches. */
    static void check(LoopState s, int stageId, int uid, TensorIntrinsic in, boolean concrete) {
        Stage st = StepChecks.computeStage(s, stageId);
        String where = "tensorize '" + st.name() + "' with " + in.name() + ": ";
        int pos = st.indexOfUid(uid);
        if (pos < 0) throw new ScheduleException(where + "the tensorized loop no longer exists");
        ComputeOp op = st.computeOp();
        ComputeOp pat = in.op();
        List<Long> ext = in.loopExtents();
        List<Integer> nest = st.leaves().subList(pos, st.leaves().size());
        List<String> names = nest.stream().map(u -> st.all().get(u).name()).toList();
        if (nest.size() != ext.size()) {
            throw new ScheduleException(where + "the loops from '" + names.get(0) + "' inward are " + names
                    + ", but the intrinsic replaces " + ext.size() + " loops of extents " + ext);
        }
        int nSpatial = pat.axes().size();
        for (int t = 0; t < nest.size(); t++) {
            Iter it = st.all().get(nest.get(t));
            IterKind want = t < nSpatial ? IterKind.SPATIAL : IterKind.REDUCE;
            if (it.kind() != want) {
                throw new ScheduleException(where + "loop '" + it.name() + "' is a "
                        + it.kind().name().toLowerCase()
                        + " loop where the intrinsic has a " + want.name().toLowerCase() + " one (loop order "
                        + "must be the intrinsic's spatial loops, then its reduction loops)");
            }
            if (it.annotation() != IterAnnotation.NONE) {
                throw new ScheduleException(where + "loop '" + it.name() + "' is annotated "
                        + it.annotation().displayName() + "; tensorized loops carry no annotation");
            }
            if (it.extent() != null && it.extent().longValue() != ext.get(t)) {
                throw new ScheduleException(where + "loop '" + it.name() + "' has extent " + it.extent()
                        + " but the intrinsic's loop " + t + " has extent " + ext.get(t) + " (shape mismatch)");
            }
            if (it.extent() == null && concrete) {
                throw new ScheduleException(where + "loop '" + it.name() + "' has an undecided extent");
            }
            if (t > 0 && StepChecks.hasAttachments(s, stageId, nest.get(t - 1))) {
                throw new ScheduleException(where + "a stage is computed inside loop '"
                        + st.all().get(nest.get(t - 1)).name() + "', inside the tensorized nest");
            }
        }
        if (StepChecks.hasAttachments(s, stageId, nest.get(nest.size() - 1))) {
            throw new ScheduleException(where + "a stage is computed inside the innermost tensorized loop");
        }
        if (op.bodies().size() != 1 || !(op.body() instanceof Reduce r) || !(pat.body() instanceof Reduce pr)) {
            throw new ScheduleException(
                    where + "the stage is not one reduction like the pattern " + ExprPrinter.print(pat.body()));
        }
        int firstReduce = 0;
        while (st.all().get(st.leaves().get(firstReduce)).kind() == IterKind.SPATIAL) firstReduce++;
        if (firstReduce >= pos) {
            throw new ScheduleException(where + "the reduction's initialisation would fall inside the tensorized "
                    + "loops; keep a reduction loop outside them "
                    + "(split the reduction axis, reorder its outer part out)");
        }
        List<Integer> roots = new ArrayList<>();
        for (int u : nest) roots.add(rootOf(st, u, where));
        if (roots.stream().distinct().count() != roots.size()) {
            throw new ScheduleException(where + "two tensorized loops come from the same axis");
        }
        Map<Tensor, TensorRead> reads = new IdentityHashMap<>();
        if (!same(pr, r, reads)) {
            throw new ScheduleException(where + "the stage computes " + ExprPrinter.print(r)
                    + ", which is not the pattern " + ExprPrinter.print(pr));
        }
        for (Tensor t : in.pattern().inputs()) {
            if (!reads.containsKey(t)) {
                throw new ScheduleException(where + "the stage does not read pattern operand '" + t.name() + "'");
            }
        }
        if (!concrete && !s.stage(stageId).isConcrete()) return;
        for (int u : nest) tailInside(st, u, where);
        if (in.kind().isGpu()) {
            // a GPU intrinsic is a warp's collective operation: no guard around it either
            for (int root : roots) {
                if (!divides(st, root)) {
                    throw new ScheduleException(
                            where + "the splits of axis '" + st.all().get(root).name()
                                    + "' do not divide it, a guard would surround the warp's tensorized loops");
                }
            }
        }
        Layout layout = new Layout(s, st, op, in, roots, reads, where);
        String key = in.name() + " " + roots + " " + layout.shrunk();
        Map<String, String> known = LAYOUTS.computeIfAbsent(op, o -> new java.util.concurrent.ConcurrentHashMap<>());
        String refused = known.get(key);
        if (refused == null) {
            try {
                layout.check();
                refused = "";
            } catch (ScheduleException e) {
                refused = e.getMessage();
            }
            known.put(key, refused);
        }
        if (!refused.isEmpty()) throw new ScheduleException(refused);
    }

    /**
     * The check after bound inference: a stage computed inside another stage's loop covers only the region needed
     * there, so its loops may be shorter than the schedule's own extents say (a consumer tiled by 8 shrinks a
     * tensorized loop of 16 to 8). Throws unless every tensorized loop keeps the pattern's extent and every split on
     * its way to its axis still divides, by the inferred extents {@code ext} (loop uid to extent).
     */
    static void checkInferred(Stage st, Map<Integer, Long> ext) {
        if (st.tensorized() == null) return;
        int pos = st.indexOfUid(st.tensorized().iterUid());
        if (pos < 0) return; // the check at apply time reports a vanished loop
        TensorIntrinsic in = TensorIntrinsics.get(st.tensorized().intrinsic());
        String where = "tensorize '" + st.name() + "' with " + in.name() + ": ";
        List<Integer> nest = st.leaves().subList(pos, st.leaves().size());
        List<Long> want = in.loopExtents();
        for (int t = 0; t < nest.size() && t < want.size(); t++) {
            int uid = nest.get(t);
            Long e = ext.get(uid);
            if (e == null || e.longValue() != want.get(t)) {
                throw new ScheduleException(where + "loop '" + st.all().get(uid).name() + "' runs " + e
                        + " iterations where the stage is computed (bound inference: its consumer's tile needs no"
                        + " more), but the intrinsic's loop " + t + " has extent " + want.get(t));
            }
            IterRelation.Split tail = tailSplit(st, uid, ext::get);
            if (tail != null) {
                throw new ScheduleException(where + "where the stage is computed, the split of loop '"
                        + st.all().get(tail.parent()).name() + "' (" + ext.get(tail.parent())
                        + " iterations by bound inference) into " + ext.get(tail.outer()) + " x "
                        + ext.get(tail.inner()) + " leaves a tail whose guard would fall inside the tensorized loop '"
                        + st.all().get(uid).name() + "'");
            }
        }
    }

    /** The original axis whose innermost part loop {@code uid} is. */
    private static int rootOf(Stage st, int uid, String where) {
        int u = uid;
        while (u >= st.numRoots()) {
            int parent = -1;
            for (IterRelation rel : st.relations()) {
                if (rel instanceof IterRelation.Split sp && sp.inner() == u) parent = sp.parent();
            }
            if (parent < 0) {
                throw new ScheduleException(where + "loop '" + st.all().get(uid).name()
                        + "' must be the innermost part of one axis (not an outer part, not fused)");
            }
            u = parent;
        }
        return u;
    }

    /**
     * Throws unless every split on the way from tensorized loop {@code uid} up to its original axis
     * divides its loop: a split that leaves a tail there guards the axis's value, which uses the
     * tensorized loop, so the guard would fall inside the intrinsic's nest. Tails of other splits
     * (a row tile of 6 over 28 rows, an outer split of the intrinsic's axis) guard values free of the
     * nest's loops; the lowering puts their guards outside it.
     */
    private static void tailInside(Stage st, int uid, String where) {
        java.util.function.Function<Integer, Long> extent = u -> st.all().get(u).extent();
        IterRelation.Split tail = tailSplit(st, uid, extent);
        if (tail != null) {
            throw new ScheduleException(where + "the split of loop '"
                    + st.all().get(tail.parent()).name() + "' (extent " + extent.apply(tail.parent()) + ") into '"
                    + st.all().get(tail.outer()).name() + "' x '"
                    + st.all().get(tail.inner()).name()
                    + "' (" + extent.apply(tail.outer()) + " x " + extent.apply(tail.inner())
                    + ") leaves a tail whose guard would fall inside the tensorized "
                    + "loop '" + st.all().get(uid).name()
                    + "' (alignment: split the axis by a divisor, or pad it)");
        }
    }

    /**
     * The first split on the way from loop {@code uid} up to its original axis whose parts do not multiply to its
     * parent by {@code extent} (loop uid to extent; unknown extents count as not dividing), or null when all divide.
     */
    private static IterRelation.Split tailSplit(Stage st, int uid, java.util.function.Function<Integer, Long> extent) {
        int u = uid;
        while (u >= st.numRoots()) {
            IterRelation.Split found = null;
            for (IterRelation rel : st.relations()) {
                if (rel instanceof IterRelation.Split sp && sp.inner() == u) found = sp;
            }
            if (found == null) return null; // rootOf has refused anything else
            Long p = extent.apply(found.parent()), o = extent.apply(found.outer()), i = extent.apply(found.inner());
            if (p == null || o == null || i == null || o * i != p) return found;
            u = found.parent();
        }
        return null;
    }

    /** Whether every split under root axis {@code root} divides its parent exactly. */
    private static boolean divides(Stage st, int root) {
        for (IterRelation rel : st.relations()) {
            if (rel instanceof IterRelation.Split sp && under(st, sp.parent(), root)) {
                Long p = st.all().get(sp.parent()).extent();
                Long o = st.all().get(sp.outer()).extent();
                Long i = st.all().get(sp.inner()).extent();
                if (p == null || o == null || i == null || o * i != p) return false;
            }
        }
        return true;
    }

    private static boolean under(Stage st, int uid, int root) {
        int u = uid;
        while (u >= st.numRoots()) {
            int parent = -1;
            for (IterRelation rel : st.relations()) {
                if (rel instanceof IterRelation.Split sp && (sp.inner() == u || sp.outer() == u)) parent = sp.parent();
                if (rel instanceof IterRelation.Fuse f && f.fused() == u) return false;
            }
            if (parent < 0) return false;
            u = parent;
        }
        return u == root;
    }

    /**
     * Structural equality of a pattern expression and a stage expression: same node kinds, dtypes,
     * operators, constants and reducers; a pattern read matches any read of the same dtype (its
     * indices are checked by the layout), recorded in {@code reads}.
     */
    static boolean same(Expr p, Expr e, Map<Tensor, TensorRead> reads) {
        if (p.dtype() != e.dtype()) return false;
        return switch (p) {
            case TensorRead pr -> {
                if (!(e instanceof TensorRead er)) yield false;
                Tensor pt = Tensor.of(pr);
                if (reads.containsKey(pt)) yield false;
                reads.put(pt, er);
                yield true;
            }
            case Cast pc -> e instanceof Cast ec && same(pc.value(), ec.value(), reads);
            case Binary pb ->
                e instanceof Binary eb
                        && pb.op() == eb.op()
                        && same(pb.a(), eb.a(), reads)
                        && same(pb.b(), eb.b(), reads);
            case Reduce pr ->
                e instanceof Reduce er
                        && pr.reducer().name().equals(er.reducer().name())
                        && pr.sources().size() == er.sources().size()
                        && pr.valueIndex() == er.valueIndex()
                        && er.condition() instanceof IntImm c
                        && c.value() == 1
                        && sameAll(pr.sources(), er.sources(), reads);
            case IntImm pi -> e instanceof IntImm ei && pi.value() == ei.value();
            default -> p.equals(e);
        };
    }

    private static boolean sameAll(List<Expr> p, List<Expr> e, Map<Tensor, TensorRead> reads) {
        for (int k = 0; k < p.size(); k++) if (!same(p.get(k), e.get(k), reads)) return false;
        return true;
    }

    /** Integer value of an index expression with its variables bound. */
    static long eval(Expr e, Map<Var, Long> env) {
        return switch (e) {
            case IntImm i -> i.value();
            case Var v -> {
                Long x = env.get(v);
                if (x == null) throw new ScheduleException("index uses '" + v.name() + "', which is not an axis");
                yield x;
            }
            case Cast c when c.dtype().isInt() -> eval(c.value(), env);
            case Binary b -> {
                long x = eval(b.a(), env), y = eval(b.b(), env);
                yield switch (b.op()) {
                    case ADD -> x + y;
                    case SUB -> x - y;
                    case MUL -> x * y;
                    case FLOORDIV -> Math.floorDiv(x, y);
                    case FLOORMOD -> Math.floorMod(x, y);
                    case TRUNCDIV -> x / y;
                    case TRUNCMOD -> x % y;
                    case MIN -> Math.min(x, y);
                    case MAX -> Math.max(x, y);
                    case DIV -> throw new ScheduleException("index " + ExprPrinter.print(e) + " divides floats");
                };
            }
            default ->
                throw new ScheduleException(
                        "index " + ExprPrinter.print(e) + " is not an affine/floordiv/floormod expression of the axes");
        };
    }

    /** Tiles of up to this many points are checked at every point. */
    static final int EXHAUSTIVE = 16_384;

    /** Random points checked beyond the single-loop lines of a larger tile. */
    static final int SAMPLED = 2_048;

    /** The layout and alignment check over the tile, at sample positions of the other loops. */
    record Layout(
            LoopState s,
            Stage st,
            ComputeOp op,
            TensorIntrinsic in,
            List<Integer> roots,
            Map<Tensor, TensorRead> reads,
            String where) {

        void check() {
            List<IterVar> axes = new ArrayList<>(op.axes());
            axes.addAll(op.reduceAxes());
            ComputeOp pat = in.op();
            List<IterVar> patAxes = new ArrayList<>(pat.axes());
            patAxes.addAll(pat.reduceAxes());
            List<Long> ext = in.loopExtents();
            List<Tensor> operands = in.operands();
            for (int sample = 0; sample < 3; sample++) {
                Map<Var, Long> base = new HashMap<>();
                for (int a = 0; a < axes.size(); a++) {
                    IterVar v = axes.get(a);
                    long min = v.dom().min() instanceof IntImm m ? m.value() : 0;
                    int t = roots.indexOf(a);
                    long step = t >= 0 ? ext.get(t) : 1;
                    long count = v.extent() / step;
                    long pick = sample == 0 ? 0 : sample == 1 ? Math.min(1, count - 1) : count - 1;
                    base.put(v, min + pick * step);
                }
                Map<String, Long> seen = new HashMap<>();
                long[] pBase = null, sBase = null;
                long[] lds = new long[operands.size()];
                for (int point : tilePoints(ext)) {
                    Map<Var, Long> env = new HashMap<>(base);
                    Map<Var, Long> penv = new HashMap<>();
                    int rest = point;
                    for (int t = ext.size() - 1; t >= 0; t--) {
                        long l = rest % ext.get(t);
                        rest /= (int) (long) ext.get(t);
                        IterVar av = axes.get(roots.get(t));
                        env.put(av, base.get(av) + l);
                        penv.put(patAxes.get(t), l);
                    }
                    long[] so = new long[operands.size()], po = new long[operands.size()];
                    for (int k = 0; k < operands.size(); k++) {
                        Tensor pt = operands.get(k);
                        boolean out = k == operands.size() - 1;
                        List<Expr> pIdx = out
                                ? new ArrayList<>(pat.axes())
                                : reads.keySet().stream()
                                        .filter(x -> x == pt)
                                        .findFirst()
                                        .map(x -> patternRead(pat, x))
                                        .orElseThrow();
                        po[k] = flat(pIdx, pt.shape().dims(), penv, seen, null, 1);
                        Tensor stT = out ? op.outputs().get(0) : Tensor.of(reads.get(pt));
                        List<Expr> sIdx =
                                out ? new ArrayList<>(op.axes()) : reads.get(pt).indices();
                        so[k] = flat(
                                sIdx,
                                stT.shape().dims(),
                                env,
                                seen,
                                onlyLast(stT) ? pt.name() : null,
                                in.strided().get(k) ? 2 : 1);
                    }
                    if (point == 0) {
                        pBase = po;
                        sBase = so;
                        for (int k = 0; k < operands.size(); k++) {
                            int al = in.alignment().get(k);
                            if (Math.floorMod(so[k], al) != 0) {
                                throw new ScheduleException(
                                        where + "operand '" + operands.get(k).name()
                                                + "' starts a tile at element " + so[k] + ", not a multiple of " + al
                                                + " (alignment)");
                            }
                        }
                        continue;
                    }
                    for (int k = 0; k < operands.size(); k++) {
                        long want = po[k] - pBase[k];
                        if (in.strided().get(k)) want = strided(k, operands.get(k), want, so[k] - sBase[k], lds, penv);
                        if (so[k] - sBase[k] != want) {
                            throw new ScheduleException(where + "operand '"
                                    + operands.get(k).name() + "' (tensor '"
                                    + (k == operands.size() - 1
                                            ? op.outputs().get(0).name()
                                            : Tensor.of(reads.get(operands.get(k)))
                                                    .name())
                                    + "') is laid out differently from the pattern: at tile point " + penv
                                    + " its element is " + (so[k] - sBase[k]) + " past the tile's first, the pattern's "
                                    + (po[k] - pBase[k]) + " (layout); pack it as the intrinsic reads it");
                        }
                    }
                }
            }
        }

        /** For each of the intrinsic's operands, whether its tensor's buffer may be shrunk ({@link #onlyLast}). */
        List<Boolean> shrunk() {
            List<Boolean> out = new ArrayList<>();
            List<Tensor> operands = in.operands();
            for (int k = 0; k < operands.size(); k++) {
                boolean isOut = k == operands.size() - 1;
                TensorRead r = reads.get(operands.get(k));
                out.add(onlyLast(isOut ? op.outputs().get(0) : r == null ? null : Tensor.of(r)));
            }
            return out;
        }

        /**
         * The tile points (row-major indices over the nest's loops, the first point first) the layout check visits:
         * every one up to {@link #EXHAUSTIVE}; beyond that (an AMX chain of several tile multiplies), the first, every
         * point with a single loop off zero, the last, and {@link #SAMPLED} seeded random ones: index expressions
         * are affine, floordiv and floormod of the loops, so a layout that differs from the pattern's differs along a
         * single loop or at a random point with overwhelming likelihood, while the check stays linear in the nest.
         */
        static int[] tilePoints(List<Long> ext) {
            long points = 1;
            for (long x : ext) points *= x;
            if (points <= EXHAUSTIVE)
                return java.util.stream.IntStream.range(0, (int) points).toArray();
            java.util.TreeSet<Integer> set = new java.util.TreeSet<>();
            set.add(0);
            long stride = 1;
            for (int t = ext.size() - 1; t >= 0; t--) {
                for (long l = 1; l < ext.get(t); l++) set.add(Math.toIntExact(l * stride));
                stride *= ext.get(t);
            }
            set.add(Math.toIntExact(points - 1));
            java.util.SplittableRandom r = new java.util.SplittableRandom(points);
            for (int i = 0; i < SAMPLED; i++) set.add(r.nextInt(Math.toIntExact(points)));
            return set.stream().mapToInt(Integer::intValue).toArray();
        }

        /**
         * The offset a strided operand's element at pattern offset {@code pat} must have: its row
         * times the leading dimension (set by the first point off the tile's first row, then kept
         * in {@code lds}), plus its column.
         */
        private long strided(int k, Tensor pt, long pat, long actual, long[] lds, Map<Var, Long> penv) {
            long cols = pt.shape().dims().get(1);
            long row = pat / cols, col = pat % cols;
            if (row == 0) return col;
            if (lds[k] == 0) {
                long ld = (actual - col) / row;
                if (ld < cols || ld * row + col != actual) return actual + 1; // reported as a layout mismatch
                int al = in.alignment().get(k);
                if (ld % al != 0) {
                    throw new ScheduleException(where + "operand '" + pt.name() + "' has rows " + ld
                            + " elements apart, not a multiple of " + al + " (alignment of the leading dimension)");
                }
                lds[k] = ld;
            }
            return row * lds[k] + col;
        }

        private static List<Expr> patternRead(ComputeOp pat, Tensor t) {
            List<TensorRead> found = new ArrayList<>();
            dev.kiln.ir.Exprs.forEach(pat.body(), e -> {
                if (e instanceof TensorRead r && Tensor.of(r) == t) found.add(r);
            });
            return found.get(0).indices();
        }

        /**
         * Whether tensor {@code t}'s buffer may not be its full row-major shape (a stage computed
         * inside a loop, whose buffer shrinks, or one with storage_align): then only its last index
         * may vary over the tile.
         */
        private boolean onlyLast(Tensor t) {
            if (t == null || t.isPlaceholder()) return false;
            for (Stage x : s.stages()) {
                if (x.op() == t.op())
                    return x.computeAt() != ComputeAtKind.ROOT || x.storageAlign() != null || x.storageBlock() != null;
            }
            return false;
        }

        private long flat(
                List<Expr> idx,
                List<Long> shape,
                Map<Var, Long> env,
                Map<String, Long> firstOuter,
                String onlyLastOf,
                int inner) {
            long off = 0;
            for (int d = 0; d < idx.size(); d++) off = off * shape.get(d) + eval(idx.get(d), env);
            if (onlyLastOf != null) {
                // the offset within the last dimension (the last two for a strided operand, whose
                // leading dimension the backend reads from the buffer) is all that stays true in a shrunk buffer
                long outer = 0;
                for (int d = 0; d < idx.size() - inner; d++) outer = outer * shape.get(d) + eval(idx.get(d), env);
                Long first = firstOuter.putIfAbsent(onlyLastOf, outer);
                if (first != null && first.longValue() != outer) {
                    throw new ScheduleException(where + "operand '" + onlyLastOf + "' lives in a buffer computed "
                            + "inside a loop (or storage-aligned); only its last "
                            + (inner == 1 ? "index" : inner + " indices") + " may vary over the tile");
                }
            }
            return off;
        }
    }
}
