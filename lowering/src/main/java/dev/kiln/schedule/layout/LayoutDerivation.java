package dev.kiln.schedule.layout;

import dev.kiln.ir.Expr;
import dev.kiln.ir.ExprPrinter;
import dev.kiln.ir.Exprs;
import dev.kiln.ir.IntImm;
import dev.kiln.ir.IterVar;
import dev.kiln.ir.KilnException;
import dev.kiln.ir.TensorRead;
import dev.kiln.ir.Var;
import dev.kiln.schedule.ComputeAtKind;
import dev.kiln.schedule.IterRelation;
import dev.kiln.schedule.LoopState;
import dev.kiln.schedule.Stage;
import dev.kiln.te.ComputeOp;
import dev.kiln.te.Operation;
import dev.kiln.te.Tensor;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Derives the packed layout of a weight from a replayed, bound-inferred {@link LoopState} (Ansor's
 * GetOrigLayout/GetNewLayout, with loops traced through the split and fuse relations instead of
 * matched by name). The loops that enclose the reading stage's body are listed outermost first:
 * first those of the stages it is computed inside (mapped onto its own axes through the
 * consumer's read of it), then its own leaves, fused loops expanded into their parents. Each loop
 * that derives from an axis indexing the weight becomes a packed dimension, with the stride the
 * split relations give it inside that axis and the extent bound inference gives it.
 */
final class LayoutDerivation {

    /** Why a weight keeps its layout. */
    static final class NotRewritable extends Exception {
        NotRewritable(String reason) {
            super(reason, null, false, false);
        }
    }

    /** Where a loop comes from: one root axis with a stride, several fused loops, or a split of a fused loop. */
    private sealed interface Origin {
        record Single(int root, long stride) implements Origin {}

        record Fused(List<Integer> parents) implements Origin {}

        record Mixed(Set<Integer> roots) implements Origin {}
    }

    /** A loop enclosing the reading stage's body, in terms of the reading stage's root axes. */
    private record Loop(String name, Set<Integer> roots, long stride, long extent) {
        boolean single() {
            return roots.size() == 1 && stride > 0;
        }

        int root() {
            return roots.iterator().next();
        }
    }

    private final LoopState state;
    private final List<Map<Integer, Long>> extents;

    LayoutDerivation(LoopState state, List<Map<Integer, Long>> extents) {
        this.state = state;
        this.extents = extents;
    }

    /** The packed layout for weight {@code p}, or why there is none. */
    PackedLayout derive(Tensor p) throws NotRewritable {
        List<Integer> readers = new ArrayList<>();
        for (int i = 0; i < state.stages().size(); i++) {
            if (state.stages().get(i).op() instanceof ComputeOp c
                    && c.inputTensors().contains(p)) readers.add(i);
        }
        if (readers.size() != 1) {
            throw new NotRewritable(
                    readers.isEmpty()
                            ? "no stage reads it after the schedule"
                            : "it is read by several stages "
                                    + readers.stream()
                                            .map(i -> state.stages().get(i).name())
                                            .toList());
        }
        int r = readers.get(0);
        Stage st = state.stages().get(r);
        ComputeOp op = st.computeOp();
        if ("cache_read".equals(op.tag())) {
            throw new NotRewritable("it is copied by cache_read into '" + st.name() + "'");
        }
        if (st.computeAt() == ComputeAtKind.INLINED) {
            throw new NotRewritable("its reader '" + st.name() + "' is inlined into its consumers");
        }
        List<Integer> axisRoot = simpleAccess(op, p);
        List<String> names = new ArrayList<>();
        for (int d = 0; d < p.rank(); d++) {
            names.add(
                    axisRoot.get(d) < 0
                            ? "_" + d
                            : state.stages().get(r).all().get(axisRoot.get(d)).name());
        }
        List<Loop> loops = new ArrayList<>(outerLoops(r));
        loops.addAll(expand(r, st.leaves()));
        List<PackedLayout.Dim> dims = new ArrayList<>();
        for (Loop l : loops) {
            Set<Integer> mine = new LinkedHashSet<>();
            for (int d = 0; d < p.rank(); d++) if (l.roots().contains(axisRoot.get(d))) mine.add(d);
            if (mine.isEmpty() || l.extent() == 1) continue;
            if (!l.single()) {
                throw new NotRewritable(
                        "loop '" + l.name() + "' of '" + st.name() + "' mixes axes (a split of a fused loop)");
            }
            dims.add(new PackedLayout.Dim(mine.iterator().next(), l.stride(), l.extent()));
        }
        PackedLayout layout;
        try {
            layout = new PackedLayout(p.shape().toArray(), dims, names);
        } catch (KilnException e) {
            throw new NotRewritable(
                    "the loops of '" + st.name() + "' do not tile its axes exactly (a split that does not "
                            + "divide, or a region shrunk by bound inference): " + e.getMessage());
        }
        if (layout.isIdentity()) throw new NotRewritable("the loops of '" + st.name() + "' walk it in its own layout");
        return layout;
    }

    /**
     * For each axis of {@code p}, the root loop of {@code op} that indexes it (-1 for a constant 0
     * on an axis of extent 1); every read of {@code p} must be the same and index each axis by a
     * distinct axis of {@code op} with the same extent (so also no offset, stride or padding).
     */
    static List<Integer> simpleAccess(ComputeOp op, Tensor p) throws NotRewritable {
        List<List<Expr>> reads = new ArrayList<>();
        for (Expr b : op.bodies()) {
            Exprs.forEach(b, x -> {
                if (x instanceof TensorRead t && t.tensor() == p) reads.add(t.indices());
            });
        }
        if (reads.isEmpty()) throw new NotRewritable("'" + op.name() + "' does not read it");
        for (List<Expr> other : reads) {
            if (!other.equals(reads.get(0))) {
                throw new NotRewritable("'" + op.name() + "' reads it at two different places");
            }
        }
        List<IterVar> red = op.reduceAxes();
        List<Integer> out = new ArrayList<>();
        for (int d = 0; d < p.rank(); d++) {
            Expr e = reads.get(0).get(d);
            int root = -1;
            if (e instanceof IterVar v) {
                int a = op.axes().indexOf(v);
                root = a >= 0 ? a : red.indexOf(v) >= 0 ? op.axes().size() + red.indexOf(v) : -1;
                if (root < 0 || !(v.dom().min() instanceof IntImm m && m.value() == 0) || v.extent() != p.dim(d))
                    root = -2;
            } else if (!(e instanceof IntImm c && c.value() == 0 && p.dim(d) == 1)) {
                root = -2;
            }
            if (root == -2 || (root >= 0 && out.contains(root))) {
                throw new NotRewritable(
                        "index " + d + " of '" + p.name() + "' in '" + op.name() + "' is " + ExprPrinter.print(e)
                                + ", not a loop variable of its own (a strided, padded or repeated access)");
            }
            out.add(root);
        }
        return out;
    }

    /** The loops of the stages stage {@code r} is computed inside, outermost first, over r's root axes. */
    private List<Loop> outerLoops(int r) throws NotRewritable {
        Stage st = state.stages().get(r);
        if (st.computeAt() != ComputeAtKind.ITER) return List.of();
        int c = st.attachStage();
        Stage target = state.stages().get(c);
        int pos = target.indexOfUid(st.attachIter());
        List<Loop> theirs = new ArrayList<>(outerLoops(c));
        theirs.addAll(expand(c, target.leaves().subList(0, pos + 1)));
        Map<Integer, Integer> map = rootMap(c, r);
        List<Loop> out = new ArrayList<>();
        for (Loop l : theirs) {
            Set<Integer> roots = new LinkedHashSet<>();
            for (int x : l.roots()) if (map.containsKey(x)) roots.add(map.get(x));
            if (!roots.isEmpty())
                out.add(new Loop(target.name() + "." + l.name(), roots, l.single() ? l.stride() : -1, l.extent()));
        }
        return out;
    }

    /**
     * Stage {@code c}'s spatial root axes that index stage {@code r}'s output, as {c root -> r root}:
     * c must read r (directly or through inlined stages) at one place, each index one of c's axes.
     */
    private Map<Integer, Integer> rootMap(int c, int r) throws NotRewritable {
        ComputeOp consumer = state.stages().get(c).computeOp();
        Operation target = state.stages().get(r).op();
        List<List<Expr>> reads = new ArrayList<>();
        for (Expr b : consumer.bodies()) reads.addAll(readsThrough(b, target));
        String why = "'" + state.stages().get(r).name() + "' is computed inside '" + consumer.name() + "'";
        if (reads.isEmpty()) throw new NotRewritable(why + ", which does not read it");
        Map<Integer, Integer> map = new HashMap<>();
        for (List<Expr> idx : reads) {
            if (!idx.equals(reads.get(0))) throw new NotRewritable(why + ", which reads it at two different places");
        }
        List<Expr> idx = reads.get(0);
        for (int d = 0; d < idx.size(); d++) {
            int a = idx.get(d) instanceof IterVar v ? consumer.axes().indexOf(v) : -1;
            if (a < 0 && unitRead(idx.get(d), d, consumer, target)) a = d;
            if (a < 0 || map.containsKey(a)) {
                throw new NotRewritable(why + ", which reads it at " + ExprPrinter.print(idx.get(d)) + " on axis " + d
                        + ", not at one of its loop variables");
            }
            map.put(a, d);
        }
        return map;
    }

    /**
     * Whether index {@code e} at position {@code d} is 0 on a dimension of extent 1 of both the consumer
     * ({@link ComputeOp#readsUnitAxisAt}, as the sketch rules' {@code IndexAccess} reads it) and the tensor it reads:
     * it stands for the consumer's axis {@code d}.
     */
    private static boolean unitRead(Expr e, int d, ComputeOp consumer, Operation target) {
        return consumer.readsUnitAxisAt(e, d)
                && target instanceof ComputeOp t
                && d < t.axes().size()
                && t.axes().get(d).extent() == 1;
    }

    /** Index lists at which {@code e} reads an output of {@code target}, looking through inlined stages. */
    private List<List<Expr>> readsThrough(Expr e, Operation target) {
        List<TensorRead> direct = new ArrayList<>();
        Exprs.forEach(e, x -> {
            if (x instanceof TensorRead t) direct.add(t);
        });
        List<List<Expr>> out = new ArrayList<>();
        for (TensorRead t : direct) {
            Operation op = Tensor.of(t).op();
            if (op == target) {
                out.add(t.indices());
                continue;
            }
            for (Stage s : state.stages()) {
                if (s.op() != op || s.computeAt() != ComputeAtKind.INLINED || !(op instanceof ComputeOp inl)) continue;
                Map<Var, Expr> sub = new IdentityHashMap<>();
                for (int d = 0; d < inl.axes().size(); d++)
                    sub.put(inl.axes().get(d), t.indices().get(d));
                for (List<Expr> inner :
                        readsThrough(inl.bodies().get(Tensor.of(t).valueIndex()), target)) {
                    out.add(inner.stream().map(x -> Exprs.substitute(x, sub)).toList());
                }
            }
        }
        return out;
    }

    /** The given loops of stage {@code i}, fused loops expanded into their parents, over i's root axes. */
    private List<Loop> expand(int i, List<Integer> uids) {
        Stage st = state.stages().get(i);
        Map<Integer, Origin> origins = origins(st);
        Map<Integer, Long> ext = extents.get(i);
        List<Loop> out = new ArrayList<>();
        for (int uid : uids) expand(st, origins, ext, uid, out);
        return out;
    }

    private static void expand(
            Stage st, Map<Integer, Origin> origins, Map<Integer, Long> ext, int uid, List<Loop> out) {
        String name = st.all().get(uid).name();
        Long e = ext.get(uid);
        if (e == null) throw new KilnException("stage '" + st.name() + "': loop '" + name + "' has no inferred extent");
        switch (origins.get(uid)) {
            case Origin.Single s -> out.add(new Loop(name, Set.of(s.root()), s.stride(), e));
            case Origin.Fused f -> {
                for (int p : f.parents()) expand(st, origins, ext, p, out);
            }
            case Origin.Mixed m -> out.add(new Loop(name, m.roots(), -1, e));
        }
    }

    /** How every loop of the stage derives from its root axes. */
    private static Map<Integer, Origin> origins(Stage st) {
        Map<Integer, Origin> o = new HashMap<>();
        for (int u = 0; u < st.numRoots(); u++) o.put(u, new Origin.Single(u, 1));
        for (IterRelation rel : st.relations()) {
            switch (rel) {
                case IterRelation.Split sp -> {
                    Origin parent = o.get(sp.parent());
                    if (parent instanceof Origin.Single s) {
                        o.put(sp.inner(), s);
                        o.put(sp.outer(), new Origin.Single(s.root(), s.stride() * sp.factor()));
                    } else {
                        Origin m = new Origin.Mixed(roots(o, parent));
                        o.put(sp.inner(), m);
                        o.put(sp.outer(), m);
                    }
                }
                case IterRelation.Fuse f -> o.put(f.fused(), new Origin.Fused(f.parents()));
            }
        }
        return o;
    }

    private static Set<Integer> roots(Map<Integer, Origin> o, Origin x) {
        return switch (x) {
            case Origin.Single s -> Set.of(s.root());
            case Origin.Mixed m -> m.roots();
            case Origin.Fused f -> {
                Set<Integer> all = new LinkedHashSet<>();
                for (int p : f.parents()) all.addAll(roots(o, o.get(p)));
                yield all;
            }
        };
    }
}
