package dev.kiln.schedule;

import dev.kiln.arith.IntRange;
import dev.kiln.ir.Buffer;
import dev.kiln.ir.BufferLoad;
import dev.kiln.ir.Expr;
import dev.kiln.ir.ExprRewriter;
import dev.kiln.ir.Exprs;
import dev.kiln.ir.IntImm;
import dev.kiln.ir.IterVar;
import dev.kiln.ir.KilnException;
import dev.kiln.ir.Literals;
import dev.kiln.ir.MemoryScope;
import dev.kiln.ir.Reduce;
import dev.kiln.ir.TensorRead;
import dev.kiln.ir.Var;
import dev.kiln.te.ComputeOp;
import dev.kiln.te.PlaceholderOp;
import dev.kiln.te.Tensor;
import dev.kiln.tir.Allocate;
import dev.kiln.tir.For;
import dev.kiln.tir.ForKind;
import dev.kiln.tir.IfThenElse;
import dev.kiln.tir.Pragma;
import dev.kiln.tir.PrimFunc;
import dev.kiln.tir.Seq;
import dev.kiln.tir.Stmt;
import dev.kiln.tir.ThreadAxis;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Turns a loop state into the loop IR: inline, bound inference, then one loop nest per stage
 * (its loops in order, annotated), with the stages computed inside a loop placed at the start of
 * that loop's body and their buffers allocated there, shrunk to the region inferred for them. A
 * reduction initialises its output just outside its first reduction loop (over the spatial loops
 * inside it) and updates it in the innermost loop. Splits that do not divide leave guards.
 */
public final class ScheduleLowering {
    private final LoopState s;
    private final List<List<Expr>> bodies;
    /** Per stage, what bound inference made of it (null for placeholders, inlined and not yet prepared stages). */
    private final List<StageNest> nests = new ArrayList<>();

    private final Map<Var, IntRange> ranges = new LinkedHashMap<>();
    private final Map<Tensor, Buffer> buffers = new IdentityHashMap<>();
    private final Map<Tensor, List<Expr>> bufferMin = new IdentityHashMap<>();
    private final Set<String> names = new HashSet<>();

    private ScheduleLowering(LoopState s) {
        this.s = s;
        this.bodies = InlineStages.apply(s);
        for (int i = 0; i < s.stages().size(); i++) nests.add(null);
    }

    /**
     * One stage's loop nest after bound inference.
     *
     * @param region     the region of its output it computes (its consumers' demand)
     * @param extents    the extent of each of its loops, by uid
     * @param vars       the variable of each leaf loop, by uid
     * @param axisValues each axis of its operation (spatial, then reduction) as an expression of the loop variables
     * @param guards     conditions a split that does not divide or a clipped region leaves, by loop uid
     *                   (negative keys: {@code -1 - d} for spatial axis {@code d} clipped to its extent)
     */
    private record StageNest(
            InferBounds.Region region,
            Map<Integer, Long> extents,
            Map<Integer, Var> vars,
            Map<Var, Expr> axisValues,
            Map<Integer, Expr> guards) {}

    /** Lowers a state; the parameters are the DAG's inputs, then its outputs. */
    public static PrimFunc lower(String name, LoopState s) {
        return lower(name, s, s.dag().arguments());
    }

    /**
     * Lowers a state with the given parameters: tensors of the state's DAG (its placeholders and
     * outputs), in the order a caller will pass arrays.
     */
    public static PrimFunc lower(String name, LoopState s, List<Tensor> args) {
        if (!s.isConcrete()) {
            throw new ScheduleException("the schedule has undecided tile sizes; fill them before lowering");
        }
        for (int i = 0; i < s.stages().size(); i++) TensorizeStep.recheck(s, i, true);
        return new ScheduleLowering(s).run(name, args);
    }

    /**
     * Bound inference alone (what Ansor's InferBound gives the search): for each stage, the
     * extent of each of its loops by uid, as lowering emits them; a stage computed inside another
     * stage's loop covers only the region needed there, so its outer tiles often shrink to 1.
     * Null for placeholders and inlined stages. The state must be concrete; a state whose bounds
     * cannot be inferred throws.
     */
    public static List<Map<Integer, Long>> inferExtents(LoopState s) {
        if (!s.isConcrete()) {
            throw new ScheduleException("the schedule has undecided tile sizes; fill them before inferring bounds");
        }
        ScheduleLowering l = new ScheduleLowering(s);
        l.prepareAll();
        List<Map<Integer, Long>> out = new ArrayList<>();
        for (StageNest n : l.nests) out.add(n == null ? null : Map.copyOf(n.extents()));
        return java.util.Collections.unmodifiableList(out);
    }

    /** Bound inference and loop variables for every stage with loops, consumers first. */
    private void prepareAll() {
        for (int i = s.stages().size() - 1; i >= 0; i--) {
            Stage st = s.stages().get(i);
            if (!st.isPlaceholder() && st.computeAt() != ComputeAtKind.INLINED) prepare(i);
        }
    }

    private PrimFunc run(String name, List<Tensor> args) {
        prepareAll();

        List<Buffer> params = new ArrayList<>();
        Set<Tensor> seen = java.util.Collections.newSetFromMap(new IdentityHashMap<>());
        for (Tensor t : args) {
            Tensor actual = resolve(t);
            if (!seen.add(actual))
                throw new KilnException("function '" + name + "': tensor '" + t.name() + "' is listed twice");
            params.add(bufferFor(actual, MemoryScope.GLOBAL, actual.shape().dims(), null, null));
        }
        for (int i = 0; i < s.stages().size(); i++) {
            Stage st = s.stages().get(i);
            if (st.isPlaceholder()
                    && !buffers.containsKey(st.op().output(0))
                    && !s.consumers(i).isEmpty()) {
                throw new KilnException("function '" + name + "': placeholder '" + st.name()
                        + "' is read but is not among the arguments " + args);
            }
            if (st.output() && st.op().outputs().stream().noneMatch(buffers::containsKey)) {
                throw new KilnException(
                        "function '" + name + "': output '" + st.name() + "' is not among the arguments " + args);
            }
        }
        List<Stmt> roots = new ArrayList<>();
        List<Buffer> rootAllocs = new ArrayList<>();
        for (int i = 0; i < s.stages().size(); i++) {
            Stage st = s.stages().get(i);
            if (st.isPlaceholder() || st.computeAt() != ComputeAtKind.ROOT) continue;
            for (Tensor t : st.op().outputs()) {
                if (!buffers.containsKey(t))
                    rootAllocs.add(bufferFor(t, st.scope(), t.shape().dims(), st.storageAlign(), block(i)));
            }
            roots.add(emitStage(i));
        }
        Stmt body = Seq.of(roots);
        for (int k = rootAllocs.size() - 1; k >= 0; k--) body = new Allocate(rootAllocs.get(k), body);
        return new PrimFunc(name, params, body);
    }

    /** The state's tensor for a tensor of the original DAG (outputs may have been rebuilt). */
    private Tensor resolve(Tensor t) {
        for (Stage st : s.stages()) if (st.op() == t.op()) return t;
        if (!(t.op() instanceof PlaceholderOp)) {
            for (Stage st : s.stages()) {
                if (st.output() && st.name().equals(t.op().name()))
                    return st.op().output(t.valueIndex());
            }
        }
        throw new KilnException("tensor '" + t.name() + "' is not computed by this schedule");
    }

    // ---- bound inference and loop variables ----------------------------------------------------

    private void prepare(int i) {
        Stage st = s.stages().get(i);
        ComputeOp op = st.computeOp();
        InferBounds.Region region = InferBounds.infer(s, i, consumersView());
        Map<Integer, Long> rootExt = new HashMap<>();
        for (int d = 0; d < op.axes().size(); d++)
            rootExt.put(d, region.extent().get(d));
        List<IterVar> red = op.reduceAxes();
        for (int d = 0; d < red.size(); d++)
            rootExt.put(op.axes().size() + d, red.get(d).extent());
        Map<Integer, Long> ext = IterAlgebra.extents(st, rootExt);
        TensorizeCheck.checkInferred(st, ext);
        Map<Integer, Var> vars = new HashMap<>();
        Map<Integer, Expr> leafValues = new HashMap<>();
        for (int uid : st.leaves()) {
            Iter it = st.all().get(uid);
            if (it.kind() == IterKind.MIXED && op.isReduction()) {
                throw new ScheduleException("stage '" + st.name() + "': loop '" + it.name()
                        + "' fuses spatial and reduction loops; Kiln cannot lower such a reduction");
            }
            Var v = new Var(it.name(), DTYPE);
            vars.put(uid, v);
            leafValues.put(uid, v);
            ranges.put(v, IntRange.of(0, ext.get(uid) - 1));
        }
        Map<Integer, Expr> values = IterAlgebra.values(st, leafValues, ext);
        Map<Integer, Expr> g = new LinkedHashMap<>(IterAlgebra.guardsByLoop(st, values, ext));
        Map<Var, Expr> av = new IdentityHashMap<>();
        for (int d = 0; d < op.axes().size(); d++) {
            IterVar a = op.axes().get(d);
            Expr min = region.min().get(d);
            Expr v = isZero(min) ? values.get(d) : min.add(values.get(d));
            av.put(a, v);
            if (region.clipped()[d]) {
                g.put(-1 - d, v.ge(Literals.of(v.dtype(), 0L)).and(v.lt(Literals.of(v.dtype(), a.extent()))));
            }
        }
        for (int d = 0; d < red.size(); d++) {
            IterVar a = red.get(d);
            Expr off = values.get(op.axes().size() + d);
            av.put(a, isZero(a.dom().min()) ? off : off.add(a.dom().min()));
        }
        nests.set(i, new StageNest(region, ext, vars, av, g));
    }

    private static final dev.kiln.ir.DType DTYPE = dev.kiln.ir.DType.INT32;

    private static boolean isZero(Expr e) {
        return e instanceof IntImm c && c.value() == 0;
    }

    private InferBounds.Consumers consumersView() {
        return new InferBounds.Consumers() {
            @Override
            public Map<Var, Expr> axisValues(int k) {
                return nests.get(k) == null ? null : nests.get(k).axisValues();
            }

            @Override
            public List<Expr> bodies(int k) {
                return bodies.get(k);
            }

            @Override
            public Map<Var, IntRange> innerRanges(int c, int uid) {
                return ScheduleLowering.this.innerRanges(c, uid);
            }

            @Override
            public Map<Var, IntRange> sharedThreadRanges(int c, int uid, MemoryScope scope) {
                return ScheduleLowering.this.sharedThreadRanges(c, uid, scope);
            }

            @Override
            public Map<Var, IntRange> allRanges() {
                return ranges;
            }
        };
    }

    /**
     * Ranges of the thread-bound loops enclosing loop {@code uid} of stage {@code c} (itself
     * included, then the loops around the stage's own attach point, outwards) across which a
     * buffer in {@code scope} is shared: threadIdx and vthread for SHARED, all for GLOBAL.
     */
    private Map<Var, IntRange> sharedThreadRanges(int c, int uid, MemoryScope scope) {
        Map<Var, IntRange> out = new IdentityHashMap<>();
        if (scope == MemoryScope.LOCAL) return out;
        int stage = c, at = uid;
        while (true) {
            Stage st = s.stages().get(stage);
            Map<Integer, Var> vars = leafVars(stage);
            int pos = st.indexOfUid(at);
            for (int q = 0; q <= pos && vars != null; q++) {
                ThreadAxis t = st.all().get(st.leaves().get(q)).annotation().thread();
                if (t == null) continue;
                boolean block = t == ThreadAxis.BLOCK_X || t == ThreadAxis.BLOCK_Y || t == ThreadAxis.BLOCK_Z;
                if (block && scope != MemoryScope.GLOBAL) continue;
                Var v = vars.get(st.leaves().get(q));
                out.put(v, ranges.get(v));
            }
            if (st.computeAt() != ComputeAtKind.ITER) return out;
            at = st.attachIter();
            stage = st.attachStage();
        }
    }

    /** Ranges of every loop variable of loops strictly inside loop {@code uid} of stage {@code c}. */
    private Map<Var, IntRange> innerRanges(int c, int uid) {
        Map<Var, IntRange> out = new IdentityHashMap<>();
        Stage st = s.stages().get(c);
        int pos = uid < 0 ? -1 : st.indexOfUid(uid);
        Map<Integer, Var> vars = leafVars(c);
        if (vars == null) return out;
        for (int q = pos + 1; q < st.leaves().size(); q++) {
            Var v = vars.get(st.leaves().get(q));
            out.put(v, ranges.get(v));
        }
        for (int a : s.attachedTo(c)) {
            if (leafVars(a) == null) continue;
            if (st.indexOfUid(s.stages().get(a).attachIter()) >= Math.max(pos, 0) || pos < 0) {
                for (Var v : leafVars(a).values()) out.put(v, ranges.get(v));
                out.putAll(innerRanges(a, -1));
            }
        }
        return out;
    }

    /** The loop variables of stage {@code i}, by uid; null when it has no loops (yet). */
    private Map<Integer, Var> leafVars(int i) {
        StageNest n = nests.get(i);
        return n == null ? null : n.vars();
    }

    // ---- buffers ---------------------------------------------------------------------------

    /** The block of stage {@code i}'s buffer ({@link StorageBlockStep}), or null. */
    private Block block(int i) {
        Stage st = s.stages().get(i);
        if (st.storageBlock() == null) return null;
        return new Block(st.storageBlock().dim(), StorageBlockStep.factorIn(s, i));
    }

    private Buffer bufferFor(Tensor t, MemoryScope scope, List<Long> shape, Stage.StorageAlign align, Block block) {
        Buffer existing = buffers.get(t);
        if (existing != null) return existing;
        String n = t.name();
        for (int k = 1; !names.add(n); k++) n = t.name() + "_" + k;
        if (block != null) {
            List<Long> physical = new ArrayList<>();
            physical.add(Math.ceilDiv(shape.get(block.dim()), block.factor()));
            for (int q = 0; q < shape.size(); q++) if (q != block.dim()) physical.add(shape.get(q));
            physical.add(block.factor());
            Buffer b = Buffer.rowMajor(n, t.dtype(), physical, scope);
            buffers.put(t, b);
            blocked.put(b, block);
            return b;
        }
        List<Expr> sh = new ArrayList<>();
        List<Expr> st = new ArrayList<>();
        long stride = 1;
        for (int d = shape.size() - 1; d >= 0; d--) {
            if (align != null && d == align.dim()) {
                stride += Math.floorMod(align.offset() - stride, align.factor());
            }
            st.addFirst(IntImm.i32(stride));
            stride *= shape.get(d);
        }
        for (long x : shape) sh.add(IntImm.i32(x));
        Buffer b = new Buffer(n, t.dtype(), sh, st, scope);
        buffers.put(t, b);
        return b;
    }

    /** Dimension {@code dim} of a buffer stored in blocks of {@code factor}. */
    private record Block(int dim, long factor) {
        /** {@code [x_d / f, the other indices..., x_d % f]} for the logical indices {@code idx}. */
        List<Expr> physical(List<Expr> idx) {
            Expr x = idx.get(dim);
            List<Expr> out = new ArrayList<>();
            out.add(x.floordiv(factor));
            for (int q = 0; q < idx.size(); q++) if (q != dim) out.add(idx.get(q));
            out.add(x.floormod(factor));
            return out;
        }
    }

    /** The blocked buffers ({@link StorageBlockStep}). */
    private final Map<Buffer, Block> blocked = new IdentityHashMap<>();

    /** The indices of an access of buffer {@code b} at logical indices {@code idx} (the same unless it is blocked). */
    private List<Expr> physical(Buffer b, List<Expr> idx) {
        Block k = blocked.get(b);
        return k == null ? idx : k.physical(idx);
    }

    // ---- emission --------------------------------------------------------------------------

    private Stmt emitStage(int i) {
        Stage st = s.stages().get(i);
        ComputeOp op = st.computeOp();
        for (int a : s.attachedTo(i)) {
            Stage at = s.stages().get(a);
            if (at.computeAt() != ComputeAtKind.ITER) continue;
            for (Tensor t : at.op().outputs()) {
                bufferFor(t, at.scope(), nests.get(a).region().extent(), at.storageAlign(), block(a));
                bufferMin.put(t, nests.get(a).region().min());
            }
        }
        StageNest nest = nests.get(i);
        Map<Integer, Var> vars = nest.vars();
        Map<Integer, Long> ext = nest.extents();
        Map<Var, Expr> av = nest.axisValues();
        InferBounds.Region region = nest.region();
        List<Expr> storeIdx = new ArrayList<>();
        for (int d = 0; d < op.axes().size(); d++) {
            Expr v = av.get(op.axes().get(d));
            Expr min = region.min().get(d);
            storeIdx.add(isZero(min) ? v : v.sub(min));
        }
        List<Buffer> outs = op.outputs().stream().map(buffers::get).toList();
        storeIdx = physical(outs.get(0), storeIdx);
        List<Expr> allGuards = new ArrayList<>(nest.guards().values());
        List<Expr> spatialGuards = new ArrayList<>();
        for (var e : nest.guards().entrySet()) {
            if (e.getKey() < 0 || st.all().get(e.getKey()).kind() == IterKind.SPATIAL) spatialGuards.add(e.getValue());
        }
        List<Integer> leaves = st.leaves();
        int n = leaves.size();
        Stmt inner;
        List<Expr> eff = bodies.get(i);
        if (eff.get(0) instanceof Reduce r) {
            int p = 0;
            while (p < n && st.all().get(leaves.get(p)).kind() == IterKind.SPATIAL) p++;
            Stage.Tensorized ts = st.tensorized();
            int tq = ts == null ? -1 : st.indexOfUid(ts.iterUid());
            if (tq < 0) p = initPosition(st, ext, p);
            List<Expr> nestGuards = tq < 0 ? allGuards : new ArrayList<>();
            List<Expr> outerGuards = new ArrayList<>();
            if (tq >= 0) splitGuards(st, nest, tq, nestGuards, outerGuards);
            Stmt update = guard(nestGuards, ReductionBody.update(r, outs, storeIdx, e -> convert(e, av)), r, av);
            for (int q = n - 1; q >= p; q--) {
                update = loop(i, q, update);
                if (q == tq) update = guard(outerGuards, update, null, av);
            }
            Map<Var, Expr> fresh = new IdentityHashMap<>();
            List<Var> initVars = new ArrayList<>();
            for (int q = p + 1; q < n; q++) {
                if (st.all().get(leaves.get(q)).kind() != IterKind.SPATIAL) continue;
                Var old = vars.get(leaves.get(q));
                Var nv = old.copy();
                fresh.put(old, nv);
                initVars.add(nv);
            }
            List<Expr> initIdx =
                    storeIdx.stream().map(e -> Exprs.substitute(e, fresh)).toList();
            List<Expr> initGuards =
                    spatialGuards.stream().map(e -> Exprs.substitute(e, fresh)).toList();
            Stmt init = guard(initGuards, ReductionBody.init(r, outs, initIdx), null, av);
            int k = initVars.size() - 1;
            for (int q = n - 1; q > p; q--) {
                Iter it = st.all().get(leaves.get(q));
                if (it.kind() != IterKind.SPATIAL) continue;
                Var v = initVars.get(k--);
                init = new For(v, IntImm.i32(0), IntImm.i32(ext.get(it.uid())), kindOf(it), threadOf(it), init);
            }
            inner = Seq.of(init, update);
            for (int q = p - 1; q >= 0; q--) inner = loop(i, q, inner);
        } else {
            List<Stmt> stores = new ArrayList<>();
            for (int v = 0; v < outs.size(); v++) {
                stores.add(new dev.kiln.tir.Store(outs.get(v), storeIdx, convert(eff.get(v), av)));
            }
            inner = guard(allGuards, Seq.of(stores), null, av);
            for (int q = n - 1; q >= 0; q--) inner = loop(i, q, inner);
        }
        if (st.autoUnrollMaxStep() > 0) inner = new Pragma(Pragma.AUTO_UNROLL_MAX_STEP, st.autoUnrollMaxStep(), inner);
        return inner;
    }

    /**
     * Where a reduction's init goes: just outside its first reduction loop that iterates. Reduction
     * loops of extent 1 before it (a split whose outer part the search left at 1, moved out by a
     * reorder) run once, so the init may go inside them; otherwise it would cover every spatial
     * loop inside them, as a separate nest over the whole tile (the ResNet-50 stem's 1.6 MB of zeros
     * per thread, written and read back instead of accumulating in registers). With no reduction
     * loop that iterates, the init stays at the first reduction loop {@code first}.
     */
    private static int initPosition(Stage st, Map<Integer, Long> ext, int first) {
        List<Integer> leaves = st.leaves();
        for (int q = first; q < leaves.size(); q++) {
            Iter it = st.all().get(leaves.get(q));
            if (it.kind() != IterKind.SPATIAL && ext.get(it.uid()) != 1L) return q;
        }
        return first;
    }

    /**
     * The guards of a tensorized stage: those free of the tensorized nest's loops (a row tile's
     * tail) go to {@code outside}, around the nest, which stays exact; one that uses them (a tail the
     * tensorize check cannot see, as a clipped region of a stage computed at its consumer's tile)
     * is refused, naming the loop.
     */
    private static void splitGuards(Stage st, StageNest nest, int tq, List<Expr> inside, List<Expr> outside) {
        java.util.Set<Var> nestVars = java.util.Collections.newSetFromMap(new IdentityHashMap<>());
        for (int q = tq; q < st.leaves().size(); q++)
            nestVars.add(nest.vars().get(st.leaves().get(q)));
        for (var e : nest.guards().entrySet()) {
            boolean uses = nestVars.stream().anyMatch(v -> Exprs.uses(e.getValue(), v));
            if (!uses) {
                outside.add(e.getValue());
                continue;
            }
            String what = e.getKey() >= 0
                    ? "loop '" + st.all().get(e.getKey()).name() + "'"
                    : "axis '" + st.computeOp().axes().get(-1 - e.getKey()).name() + "' (its region is clipped)";
            throw new ScheduleException("tensorize '" + st.name() + "' with "
                    + st.tensorized().intrinsic() + ": "
                    + what + " needs a guard that uses the tensorized loops from '"
                    + st.all().get(st.leaves().get(tq)).name() + "' inward; it would fall inside the intrinsic's"
                    + " nest (make the tiles over that axis divide it)");
        }
    }

    private Stmt guard(List<Expr> conds, Stmt body, Reduce r, Map<Var, Expr> av) {
        Expr c = null;
        for (Expr g : conds) c = c == null ? g : c.and(g);
        if (r != null && !(r.condition() instanceof IntImm t && t.value() == 1)) {
            Expr rc = convert(r.condition(), av);
            c = c == null ? rc : c.and(rc);
        }
        return c == null ? body : IfThenElse.of(c, body);
    }

    /** The loop of leaf {@code q} of stage {@code i} around {@code body}, with the stages computed at it. */
    private Stmt loop(int i, int q, Stmt body) {
        Stage st = s.stages().get(i);
        Iter it = st.all().get(st.leaves().get(q));
        List<Stmt> seq = new ArrayList<>();
        List<Buffer> allocs = new ArrayList<>();
        for (int a : s.attachedTo(i)) {
            Stage at = s.stages().get(a);
            if (at.attachIter() != it.uid() || at.computeAt() != ComputeAtKind.ITER) continue;
            for (Tensor t : at.op().outputs()) allocs.add(buffers.get(t));
            seq.add(emitStage(a));
        }
        seq.add(body);
        Stmt inner = Seq.of(seq);
        for (int k = allocs.size() - 1; k >= 0; k--) inner = new Allocate(allocs.get(k), inner);
        StageNest nest = nests.get(i);
        Var v = nest.vars().get(it.uid());
        For f = new For(v, IntImm.i32(0), IntImm.i32(nest.extents().get(it.uid())), kindOf(it), threadOf(it), inner);
        Stage.Tensorized t = st.tensorized();
        if (t != null && t.iterUid() == it.uid()) return new Pragma(TensorizeStep.PRAGMA_PREFIX + t.intrinsic(), 0, f);
        return f;
    }

    private static ForKind kindOf(Iter it) {
        return switch (it.annotation()) {
            case NONE -> ForKind.SERIAL;
            case UNROLL -> ForKind.UNROLLED;
            case VECTORIZE -> ForKind.VECTORIZED;
            case PARALLEL -> ForKind.PARALLEL;
            case VTHREAD, BLOCK_X, THREAD_X, BLOCK_Y, THREAD_Y, BLOCK_Z, THREAD_Z -> ForKind.THREAD_BOUND;
        };
    }

    private static dev.kiln.tir.ThreadAxis threadOf(Iter it) {
        return it.annotation().thread();
    }

    /** Replaces axes by their loop expressions and tensor reads by buffer loads relative to the buffer's region. */
    private Expr convert(Expr e, Map<Var, Expr> av) {
        return new ExprRewriter() {
            @Override
            public Expr visit(Expr x) {
                if (x instanceof Var v) {
                    Expr r = av.get(v);
                    if (r == null) throw new KilnException("variable '" + v.name() + "' is not bound in this stage");
                    return r;
                }
                if (x instanceof TensorRead t) {
                    Buffer b = buffers.get(t.tensor());
                    if (b == null)
                        throw new KilnException("tensor '" + t.tensor().name() + "' has no buffer here");
                    List<Expr> idx = visitAll(t.indices());
                    List<Expr> min = bufferMin.get(t.tensor());
                    if (min != null) {
                        List<Expr> rel = new ArrayList<>();
                        for (int d = 0; d < idx.size(); d++)
                            rel.add(isZero(min.get(d)) ? idx.get(d) : idx.get(d).sub(min.get(d)));
                        idx = rel;
                    }
                    return new BufferLoad(b, physical(b, idx));
                }
                return rewriteChildren(x);
            }
        }.visit(e);
    }
}
