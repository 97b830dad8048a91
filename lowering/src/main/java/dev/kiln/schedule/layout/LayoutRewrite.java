package dev.kiln.schedule.layout;

import dev.kiln.ir.Expr;
import dev.kiln.ir.ExprRewriter;
import dev.kiln.ir.KilnException;
import dev.kiln.ir.TensorRead;
import dev.kiln.runtime.NDArray;
import dev.kiln.schedule.ComputeAtKind;
import dev.kiln.schedule.Iter;
import dev.kiln.schedule.LoopState;
import dev.kiln.schedule.Schedule;
import dev.kiln.schedule.ScheduleLowering;
import dev.kiln.schedule.Stage;
import dev.kiln.te.ComputeDAG;
import dev.kiln.te.ComputeOp;
import dev.kiln.te.Operation;
import dev.kiln.te.PlaceholderOp;
import dev.kiln.te.Te;
import dev.kiln.te.Tensor;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Layout rewrite of constant weights, Ansor's {@code REWRITE_FOR_PRE_TRANSFORMED}: each weight is
 * stored in the order in which the tuned loop nest of the stage that reads it walks it, so the
 * innermost loops read it contiguously; the weights are transformed once at build time
 * ({@link Transform#apply}) and the program is compiled against the new layout.
 *
 * <p>{@link #rewrite} replays the schedule, infers bounds and, for every layout-free placeholder
 * read by exactly one stage whose reads index each axis of the placeholder by one of its own axes
 * (a conv weight {@code W[rh, rw, rc, co]}, a dense weight {@code W[u, k]}), derives a
 * {@link PackedLayout} from that stage's final loops ({@link LayoutDerivation}): one packed
 * dimension per loop over an axis of the weight, outermost first, with the loops of the stage it
 * is computed inside in front. The DAG is then rebuilt with a placeholder of the packed shape
 * (same name, same argument position) and the reader's body reading it at
 * {@code floormod(floordiv(axis, stride), extent)} of its original axes; the body stays a function
 * of the same axes, so the steps (which name stages and loops by index) replay unchanged, and the
 * simplifier turns each packed index into a plain loop variable after lowering. A weight whose
 * reads are not that simple (strided, padded, repeated, read by several stages, copied by
 * cache_read, read by an inlined stage), whose loops do not tile it exactly (a split that does not
 * divide it), or whose loop order is already its own layout, is left alone, with the reason in
 * {@link Result#skipped()}.
 *
 * <p>This lives in {@code dev.kiln.schedule.layout}, not in {@code dev.kiln.schedule}, because it
 * is a client of schedules (replay, bound inference, rebuilding a DAG), not a step: the steps and
 * the loop state know nothing of it.
 */
public final class LayoutRewrite {
    private LayoutRewrite() {}

    /**
     * One rewritten weight.
     *
     * @param argument  its position in {@code dag().arguments()} (the same in both DAGs)
     * @param original  the placeholder of the original DAG
     * @param rewritten the placeholder of the rewritten DAG (same name and dtype, the packed shape)
     * @param reader    the stage whose loops gave the layout
     * @param layout    the packed layout
     */
    public record Transform(int argument, Tensor original, Tensor rewritten, String reader, PackedLayout layout) {
        /** The packed shape. */
        public long[] newShape() {
            return layout.newShape();
        }

        /** The weight in the packed layout (a new compact array; {@code original} is not changed). */
        public NDArray apply(NDArray original) {
            if (original.dtype() != this.original.dtype()) {
                throw new KilnException("layout transform of '" + this.original.name() + "': the array is "
                        + original.dtype() + ", the placeholder " + this.original.dtype());
            }
            return layout.apply(original);
        }

        @Override
        public String toString() {
            return original.name() + Arrays.toString(original.shape().toArray()) + " -> " + layout + " (loops of '"
                    + reader + "')";
        }
    }

    /** A layout-free placeholder that keeps its layout, and why. */
    public record Skipped(Tensor placeholder, String reason) {
        @Override
        public String toString() {
            return placeholder.name() + ": " + reason;
        }
    }

    /**
     * The outcome.
     *
     * @param schedule   the same steps on the rewritten DAG (the given schedule itself when nothing changed);
     *                   its {@code dag().arguments()} has the same length and order as the original's
     * @param transforms the rewritten weights, in argument order
     * @param skipped    the layout-free placeholders left alone, in argument order
     * @param state      {@code schedule} replayed (null when the caller did not replay it; see {@link #state()})
     * @param folds      the pack stages of constant weights folded out of the DAG before {@code schedule} was made
     *                   ({@link PackFolding}): {@link #transformArguments} packs those weights first
     */
    public record Result(
            Schedule schedule,
            List<Transform> transforms,
            List<Skipped> skipped,
            LoopState state,
            List<PackFolding.Fold> folds) {
        public Result {
            transforms = List.copyOf(transforms);
            skipped = List.copyOf(skipped);
            folds = List.copyOf(folds);
        }

        /** An outcome with no folded pack. */
        public Result(Schedule schedule, List<Transform> transforms, List<Skipped> skipped, LoopState state) {
            this(schedule, transforms, skipped, state, List.of());
        }

        /** An outcome without its replayed state. */
        public Result(Schedule schedule, List<Transform> transforms, List<Skipped> skipped) {
            this(schedule, transforms, skipped, null);
        }

        /** This outcome for a schedule of a DAG whose packs {@code f} were folded ({@link PackFolding}). */
        public Result withFolds(List<PackFolding.Fold> f) {
            return new Result(schedule, transforms, skipped, state, f);
        }

        /** {@code schedule} replayed (replayed now if the outcome was made without it). */
        @Override
        public LoopState state() {
            return state != null ? state : schedule.replay();
        }

        /** Whether any weight changed layout. */
        public boolean rewritten() {
            return !transforms.isEmpty();
        }

        /** The packed layout of each rewritten weight, by argument position (in argument order). */
        public Map<Integer, PackedLayout> layouts() {
            Map<Integer, PackedLayout> out = new java.util.TreeMap<>();
            for (Transform t : transforms) out.put(t.argument(), t.layout());
            return out;
        }

        /** The transform of the argument at {@code position}, if it was rewritten. */
        public Optional<Transform> transform(int position) {
            return transforms.stream().filter(t -> t.argument() == position).findFirst();
        }

        /** The transform of an original placeholder, if it was rewritten. */
        public Optional<Transform> transform(Tensor original) {
            return transforms.stream().filter(t -> t.original() == original).findFirst();
        }

        /**
         * The arguments for the rewritten program from those of the original one: each folded weight packed by
         * its pack stage ({@link #folds()}), each rewritten weight transformed (new arrays), every other array
         * passed through.
         */
        public List<NDArray> transformArguments(List<NDArray> originalArguments) {
            int n = schedule.dag().arguments().size();
            if (originalArguments.size() != n) {
                throw new KilnException("the program takes " + n + " arguments, got " + originalArguments.size());
            }
            List<NDArray> out = new ArrayList<>(originalArguments);
            for (int a = 0; a < n; a++) out.set(a, transformArgument(a, originalArguments.get(a)));
            return out;
        }

        /**
         * The array the rewritten program reads at argument {@code position} for the original array
         * {@code original}: packed by its folded pack stage, then transformed to its packed layout (a new array),
         * or {@code original} itself when neither applies to that position.
         */
        public NDArray transformArgument(int position, NDArray original) {
            NDArray a = original;
            for (PackFolding.Fold f : folds) if (f.argument() == position) a = f.apply(a);
            Optional<Transform> t = transform(position);
            return t.isPresent() ? t.get().apply(a) : a;
        }

        /** Whether the program reads the argument at {@code position} in another layout than the original one. */
        public boolean changes(int position) {
            return transform(position).isPresent() || folds.stream().anyMatch(f -> f.argument() == position);
        }
    }

    /**
     * Rewrites the layout of the {@code layoutFree} placeholders of {@code s.dag()} (constant
     * weights) to follow the loops of {@code s}. The schedule must be concrete (tile sizes
     * decided). A tensor that is not a placeholder of the DAG throws a {@link KilnException}.
     */
    public static Result rewrite(Schedule s, Set<Tensor> layoutFree) {
        return rewrite(s.replay(), layoutFree);
    }

    /**
     * {@link #rewrite(Schedule, Set)} for a schedule already replayed into {@code state} (as the
     * tuner holds its candidates); the result carries the rewritten schedule replayed.
     */
    public static Result rewrite(LoopState state, Set<Tensor> layoutFree) {
        return rewrite(state, layoutFree, ScheduleLowering.inferExtents(state));
    }

    /**
     * {@link #rewrite(LoopState, Set)} for a state whose loops already carry their inferred extents
     * (the auto-scheduler's InferBound, as its candidates hold them): the extents are read from the
     * loops instead of inferring bounds again, which the search saves on every program it scores.
     */
    public static Result rewriteInferred(LoopState inferred, Set<Tensor> layoutFree) {
        List<Map<Integer, Long>> extents = new ArrayList<>();
        for (Stage st : inferred.stages()) {
            if (st.isPlaceholder() || st.computeAt() == ComputeAtKind.INLINED) {
                extents.add(null);
                continue;
            }
            Map<Integer, Long> m = new java.util.HashMap<>();
            for (Iter it : st.all()) if (it.extent() != null) m.put(it.uid(), it.extent());
            extents.add(m);
        }
        return rewrite(inferred, layoutFree, extents);
    }

    private static Result rewrite(LoopState state, Set<Tensor> layoutFree, List<Map<Integer, Long>> extents) {
        Schedule s = new Schedule(state.dag(), state.steps());
        ComputeDAG dag = s.dag();
        List<Tensor> args = dag.arguments();
        for (Tensor t : layoutFree) {
            if (!(t.op() instanceof PlaceholderOp) || args.stream().noneMatch(a -> a == t)) {
                throw new KilnException(
                        "layout rewrite: tensor '" + t.name() + "' is not a placeholder of the DAG, whose inputs are "
                                + dag.inputs().stream().map(Tensor::name).toList());
            }
        }
        LayoutDerivation derivation = new LayoutDerivation(state, extents);
        Map<Tensor, PackedLayout> layouts = new IdentityHashMap<>();
        Map<Tensor, String> readers = new IdentityHashMap<>();
        List<Skipped> skipped = new ArrayList<>();
        for (Tensor p : args) {
            if (!layoutFree.contains(p)) continue;
            try {
                List<ComputeOp> dagReaders = dag.ops().stream()
                        .filter(o ->
                                o instanceof ComputeOp c && c.inputTensors().contains(p))
                        .map(o -> (ComputeOp) o)
                        .toList();
                if (dagReaders.size() != 1) {
                    throw new LayoutDerivation.NotRewritable("it is read by " + dagReaders.size() + " operations "
                            + dagReaders.stream().map(ComputeOp::name).toList());
                }
                LayoutDerivation.simpleAccess(dagReaders.get(0), p);
                layouts.put(p, derivation.derive(p));
                readers.put(p, dagReaders.get(0).name());
            } catch (LayoutDerivation.NotRewritable e) {
                skipped.add(new Skipped(p, e.getMessage()));
            }
        }
        if (layouts.isEmpty()) return new Result(s, List.of(), skipped, state);

        ComputeDAG rewritten = rebuild(dag, layouts);
        List<Tensor> newArgs = rewritten.arguments();
        List<Transform> transforms = new ArrayList<>();
        for (int i = 0; i < args.size(); i++) {
            Tensor p = args.get(i);
            if (!layouts.containsKey(p)) continue;
            transforms.add(new Transform(i, p, newArgs.get(i), readers.get(p), layouts.get(p)));
        }
        Schedule out = new Schedule(rewritten, s.steps());
        LoopState replayed;
        try {
            replayed = out.replay();
        } catch (KilnException e) {
            throw new KilnException("layout rewrite: the steps do not replay on the rewritten DAG: " + e.getMessage());
        }
        return new Result(out, transforms, skipped, replayed);
    }

    /** The DAG with each laid-out placeholder replaced and its reader reading the packed indices. */
    private static ComputeDAG rebuild(ComputeDAG dag, Map<Tensor, PackedLayout> layouts) {
        Map<Tensor, Tensor> repl = new IdentityHashMap<>();
        for (Operation op : dag.ops()) {
            switch (op) {
                case PlaceholderOp p -> {
                    Tensor t = p.output(0);
                    PackedLayout l = layouts.get(t);
                    if (l != null) repl.put(t, Te.placeholder(t.name(), t.dtype(), l.newShape()));
                }
                case ComputeOp c -> {
                    if (c.inputTensors().stream().noneMatch(repl::containsKey)) continue;
                    ExprRewriter r = new ExprRewriter() {
                        @Override
                        public Expr visit(Expr e) {
                            Expr x = rewriteChildren(e);
                            if (x instanceof TensorRead t && repl.containsKey(t.tensor())) {
                                PackedLayout l = layouts.get(t.tensor());
                                return new TensorRead(
                                        repl.get(t.tensor()), l == null ? t.indices() : l.indices(t.indices()));
                            }
                            return x;
                        }
                    };
                    ComputeOp rebuilt = ComputeOp.create(c.name(), c.tag(), c.axes(), r.visitAll(c.bodies()));
                    for (int v = 0; v < c.outputs().size(); v++) repl.put(c.output(v), rebuilt.output(v));
                }
            }
        }
        List<Tensor> outs =
                dag.outputs().stream().map(t -> repl.getOrDefault(t, t)).toList();
        ComputeDAG out = new ComputeDAG(outs);
        List<Tensor> a = dag.arguments(), b = out.arguments();
        boolean same = a.size() == b.size() && dag.ops().size() == out.ops().size();
        for (int i = 0; same && i < a.size(); i++)
            same = a.get(i).name().equals(b.get(i).name());
        for (int i = 0; same && i < dag.ops().size(); i++)
            same = dag.ops().get(i).name().equals(out.ops().get(i).name());
        if (!same) {
            throw new KilnException("layout rewrite: the rewritten DAG orders its operations differently: "
                    + dag.ops().stream().map(Operation::name).toList() + " became "
                    + out.ops().stream().map(Operation::name).toList());
        }
        return out;
    }
}
