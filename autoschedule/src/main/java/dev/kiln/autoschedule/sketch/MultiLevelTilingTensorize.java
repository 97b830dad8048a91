package dev.kiln.autoschedule.sketch;

import dev.kiln.autoschedule.SearchTask;
import dev.kiln.autoschedule.analysis.AccessAnalyzer;
import dev.kiln.autoschedule.analysis.StagePredicates;
import dev.kiln.ir.KilnException;
import dev.kiln.schedule.ComputeAtKind;
import dev.kiln.schedule.ComputeAtStep;
import dev.kiln.schedule.FollowSplitStep;
import dev.kiln.schedule.Iter;
import dev.kiln.schedule.IterKind;
import dev.kiln.schedule.LoopState;
import dev.kiln.schedule.ReorderStep;
import dev.kiln.schedule.SplitStep;
import dev.kiln.schedule.Stage;
import dev.kiln.schedule.TensorIntrinsic;
import dev.kiln.schedule.TensorIntrinsics;
import dev.kiln.schedule.TensorizeStep;
import dev.kiln.target.Backend;
import dev.kiln.target.Target;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Multi-level tiling whose innermost tile is a tensor intrinsic (auto-tensorization): for a stage
 * with data reuse whose computation matches an intrinsic the target's backend implements (and the
 * CPU has the features for), one spatial axis j and one reduction axis k are split by the
 * intrinsic's extents (16 and the dot product's group), the outer parts are tiled by the structure
 * ("SSRSRS": {@code j.o} and the other spatial axes in four levels, {@code k.o} and the other
 * reductions in two), the intrinsic's two loops go innermost and are tensorized. The tile sizes of
 * the outer parts are left to the annotation rules as in {@link MultiLevelTiling}. The operands'
 * layouts must already be the intrinsic's (the weight packed: {@code dev.kiln.nn.LowPrecision});
 * the tensorize step checks that. When it applies nothing else is tried on the stage: a stage that
 * can run on the dot-product instructions does. A stage with a single elementwise consumer (the int8
 * requantize of QLinearMatMul / QLinearConv, a bias or activation) also gets the sketches with the
 * consumer fused: tiled like the stage's outer one or two spatial levels, the stage computed at that
 * tile ({@code fuse}), so the accumulator tile is requantized while it is in cache.
 *
 * <p>A tile intrinsic (AMX's {@code tdpbf16ps} / {@code tdpbusd}: two spatial axes, a 16 x 16 output tile) takes a
 * row axis i too, split by its rows, its inner part placed before j's: the nest is {@code i.t j.t k.t}, tensorized at
 * {@code i.t}; such a stage gets no fused sketch. They are offered only by the rule built with {@code tiles}
 * ({@link #cpuWithTiles}, or {@link #cpu} under {@code -Dkiln.search.amx=true}): the tuner does not pick them by
 * itself until a search with them has run on a machine with AMX. The register-tile sampler leaves such a stage to
 * the uniform draw ({@code RegisterTileSizes}: its model counts zmm accumulators, not tiles).
 */
public record MultiLevelTilingTensorize(String structure, boolean tiles) implements SketchRule {
    private static final Map<String, Set<String>> OFFERED = new ConcurrentHashMap<>();

    /**
     * The system property that lets the CPU rule use two-dimensional tile intrinsics (AMX): off until a search with
     * them has run and been timed on a machine with AMX (none of this code's sessions had one).
     */
    public static final String AMX_PROPERTY = "kiln.search.amx";

    /** The rule with one-dimensional intrinsics only (the dot products). */
    public MultiLevelTilingTensorize(String structure) {
        this(structure, false);
    }

    /** The CPU rule; tile intrinsics (AMX) only with {@code -Dkiln.search.amx=true} ({@link #AMX_PROPERTY}). */
    public static MultiLevelTilingTensorize cpu() {
        return new MultiLevelTilingTensorize(MultiLevelTiling.CPU_STRUCTURE, Boolean.getBoolean(AMX_PROPERTY));
    }

    /** The CPU rule with tile intrinsics offered too, where the target has them. */
    public static MultiLevelTilingTensorize cpuWithTiles() {
        return new MultiLevelTilingTensorize(MultiLevelTiling.CPU_STRUCTURE, true);
    }

    @Override
    public String name() {
        return "MultiLevelTilingTensorize";
    }

    /**
     * A match: the intrinsic, and the uids of the stage's axes it takes: its row axis (a tile intrinsic's first
     * spatial axis; -1 for a one-dimensional intrinsic), its vector axis (the last spatial one) and its reduction.
     */
    record Match(TensorIntrinsic intrinsic, int rowUid, int spatialUid, int reduceUid) {
        boolean isTile() {
            return rowUid >= 0;
        }
    }

    /**
     * The intrinsics offered on {@code target}: those the first backend supporting it implements
     * ({@link Backend#intrinsics}), the CPU's features permitting; none when no backend is found.
     */
    public static Set<String> offered(Target target) {
        return OFFERED.computeIfAbsent(target.toString(), k -> {
            for (Backend b : Backend.available()) if (b.supports(target)) return Set.copyOf(b.intrinsics(target));
            return Set.of();
        });
    }

    @Override
    public Condition condition(SearchTask task, AccessAnalyzer access, LoopState state, int stageId) {
        if (task.target().kind().isGpu() || offered(task.target()).isEmpty()) return Condition.SKIP;
        if (!StagePredicates.needsMultiLevelTiling(access, state, stageId)) return Condition.SKIP;
        return match(task, state, stageId, tiles) == null ? Condition.SKIP : Condition.APPLY_AND_SKIP_REST;
    }

    /**
     * The tiled, tensorized stage; and, when the stage has a single elementwise consumer (the int8
     * requantize epilogue, a bias, an activation), the same tiling with the consumer tiled like it and
     * the stage computed at the consumer's level 1 and level 2 tile (as {@link
     * MultiLevelTilingWithFusion} does): the int32 / float32 accumulator then lives in a small tile
     * buffer and the epilogue runs on it while it is in cache.
     */
    @Override
    public List<Derivation> apply(SearchTask task, AccessAnalyzer access, LoopState state, int stageId) {
        Match m = match(task, state, stageId, tiles);
        if (m == null) throw new KilnException("no tensor intrinsic matches stage " + stageId);
        Tiled base = tiled(state, stageId, m, structure);
        List<Derivation> out = new ArrayList<>();
        out.add(new Derivation(base.state(), stageId - 1));
        if (m.isTile()) return out; // the fused sketches follow one intrinsic axis only
        int consumer = StagePredicates.singleElementwiseMatchedConsumer(access, state, stageId);
        if (consumer < 0 || base.spatialSplitSteps().isEmpty() || !followable(state, stageId, consumer)) return out;
        for (int level = 1; level <= 2; level++) {
            if (structure.length() < level || structure.charAt(level - 1) != 'S') continue;
            try {
                out.add(new Derivation(fuse(base, stageId, consumer, level), stageId - 1));
            } catch (KilnException e) {
                // the tensorize step refuses the fused layout at this level (checked on every step): no such sketch
            }
        }
        return out;
    }

    /** Whether the consumer is untiled and has one spatial loop per spatial loop of the stage (follow tiling). */
    private static boolean followable(LoopState s, int stageId, int consumer) {
        Stage c = s.stage(consumer);
        long spatial = s.stage(stageId).iters().stream()
                .filter(it -> it.kind() == IterKind.SPATIAL)
                .count();
        if (spatial == 0 || c.isTiled() || c.iters().size() != spatial) return false;
        for (Iter it : c.iters()) if (it.kind() != IterKind.SPATIAL) return false;
        return true;
    }

    /**
     * The consumer tiled like the stage's first {@code level} spatial levels (its axis on the
     * intrinsic's spatial loop split by the intrinsic's extent first, that part innermost), and the
     * stage computed at the consumer's last loop of level {@code level - 1}.
     */
    static LoopState fuse(Tiled base, int stageId, int consumer, int level) {
        LoopState t = base.state();
        List<Iter> axes = t.stage(consumer).iters();
        List<List<Integer>> lv = levels(level + 1);
        Integer tail = null;
        for (int a = 0; a < axes.size(); a++) {
            int uid = axes.get(a).uid();
            if (a == base.intrinsicAxis()) {
                int at = t.stage(consumer).indexOfUid(uid);
                t = t.apply(new SplitStep(consumer, at, axes.get(a).extent(), List.of((int) base.lanes()), true));
                uid = t.stage(consumer).leaves().get(at);
                tail = t.stage(consumer).leaves().get(at + 1);
            }
            int at = t.stage(consumer).indexOfUid(uid);
            t = t.apply(
                    new FollowSplitStep(consumer, at, base.spatialSplitSteps().get(a), level));
            for (int l = 0; l <= level; l++)
                lv.get(l).add(t.stage(consumer).leaves().get(at + l));
        }
        List<Integer> order = new ArrayList<>();
        lv.forEach(order::addAll);
        if (tail != null) order.add(tail);
        Stage now = t.stage(consumer);
        List<Integer> perm = new ArrayList<>();
        for (int uid : order) perm.add(now.indexOfUid(uid));
        t = t.apply(new ReorderStep(consumer, perm));
        return t.apply(new ComputeAtStep(stageId, consumer, level * axes.size() - 1));
    }

    /**
     * The first offered intrinsic (tile intrinsics first, where {@code tiles}, the deepest chain first) and axes for
     * which the tensorize step accepts the stage.
     */
    static Match match(SearchTask task, LoopState s, int stageId, boolean tiles) {
        Stage st = s.stage(stageId);
        if (st.isPlaceholder() || st.computeAt() != ComputeAtKind.ROOT || st.isTiled() || st.tensorized() != null) {
            return null;
        }
        Set<String> offered = offered(task.target());
        List<TensorIntrinsic> candidates = new ArrayList<>(TensorIntrinsics.availableOn(task.target()));
        // tiles before dot products, the deepest chain of a tile first
        candidates.sort(
                Comparator.comparingInt((TensorIntrinsic in) -> -in.op().axes().size())
                        .thenComparingLong(in -> -in.loopExtents().getLast()));
        for (TensorIntrinsic in : candidates) {
            if (!offered.contains(in.name())) continue;
            int rows = in.op().axes().size();
            if (rows > 2 || (rows == 2 && !tiles) || in.op().reduceAxes().size() != 1) continue;
            // cheap test first: the accumulator's type
            if (st.op().outputs().get(0).dtype()
                    != in.pattern().outputs().get(0).dtype()) continue;
            List<Long> ext = in.loopExtents();
            long ei = rows == 2 ? ext.get(0) : 1, ej = ext.get(rows - 1), ek = ext.get(rows);
            for (Iter i : rows == 2 ? st.iters() : List.<Iter>of()) {
                if (!fits(i, IterKind.SPATIAL, ei)) continue;
                for (Iter j : st.iters()) {
                    if (j == i || !fits(j, IterKind.SPATIAL, ej)) continue;
                    for (Iter k : st.iters()) {
                        if (!fits(k, IterKind.REDUCE, ek)) continue;
                        Match m = new Match(in, i.uid(), j.uid(), k.uid());
                        if (accepts(s, stageId, m)) return m;
                    }
                }
            }
            for (Iter j : rows == 1 ? st.iters() : List.<Iter>of()) {
                if (!fits(j, IterKind.SPATIAL, ej)) continue;
                for (Iter k : st.iters()) {
                    if (!fits(k, IterKind.REDUCE, ek)) continue;
                    Match m = new Match(in, -1, j.uid(), k.uid());
                    if (accepts(s, stageId, m)) return m;
                }
            }
        }
        return null;
    }

    private static boolean fits(Iter it, IterKind kind, long extent) {
        return it.kind() == kind && it.extent() != null && it.extent() % extent == 0;
    }

    /** Whether the tensorize step accepts the stage tiled for {@code m} (pattern, layout, alignment). */
    private static boolean accepts(LoopState s, int stageId, Match m) {
        try {
            tile(s, stageId, m, "");
            return true;
        } catch (KilnException e) {
            return false;
        }
    }

    /**
     * A tiled, tensorized state; per spatial axis of the stage (in its order) the split step of its
     * tile levels (for the intrinsic's axis, that of its outer part), empty when the structure has at
     * most one spatial level; which of those axes the intrinsic takes, and its extent there.
     */
    record Tiled(LoopState state, List<Integer> spatialSplitSteps, int intrinsicAxis, long lanes) {}

    /**
     * The tiled, tensorized state: with an empty structure only the intrinsic's split, the order
     * (everything else outside, in its order) and the tensorize step, which is how {@link #match}
     * tries a candidate.
     */
    static LoopState tile(LoopState s, int stageId, Match m, String structure) {
        return tiled(s, stageId, m, structure).state();
    }

    static Tiled tiled(LoopState s, int stageId, Match m, String structure) {
        List<Integer> spatialAxes = new ArrayList<>();
        for (Iter it : s.stage(stageId).iters()) if (it.kind() == IterKind.SPATIAL) spatialAxes.add(it.uid());
        Map<Integer, Integer> splitOf = new java.util.HashMap<>();
        List<Long> ext = m.intrinsic().loopExtents();
        int rows = m.isTile() ? 2 : 1;
        long ej = ext.get(rows - 1), ek = ext.get(rows);
        // a split replaces its loop by the parts, in its place
        LoopState t = s;
        int io = -1, it0 = -1;
        if (m.isTile()) {
            int iAt = t.stage(stageId).indexOfUid(m.rowUid());
            t = split(t, stageId, m.rowUid(), List.of(Math.toIntExact(ext.get(0))));
            io = t.stage(stageId).leaves().get(iAt);
            it0 = t.stage(stageId).leaves().get(iAt + 1);
        }
        int jAt = t.stage(stageId).indexOfUid(m.spatialUid());
        t = split(t, stageId, m.spatialUid(), List.of((int) ej));
        int jo = t.stage(stageId).leaves().get(jAt),
                jt = t.stage(stageId).leaves().get(jAt + 1);
        int kAt = t.stage(stageId).indexOfUid(m.reduceUid());
        t = split(t, stageId, m.reduceUid(), List.of((int) ek));
        int ko = t.stage(stageId).leaves().get(kAt),
                kt = t.stage(stageId).leaves().get(kAt + 1);
        int nS = 0, nR = 0;
        for (char c : structure.toCharArray()) {
            if (c == 'S') nS++;
            else if (c == 'R') nR++;
            else throw new KilnException("invalid multi-level tiling structure '" + structure + "'");
        }
        List<List<Integer>> space = levels(Math.max(nS, 1)), reduce = levels(Math.max(nR, 1));
        for (int uid : new ArrayList<>(t.stage(stageId).leaves())) {
            if (uid == jt || uid == kt || uid == it0) continue;
            Iter it = t.stage(stageId).all().get(uid);
            boolean spatial = it.kind() == IterKind.SPATIAL;
            int n = spatial ? nS : nR;
            List<List<Integer>> target = spatial ? space : reduce;
            if (n <= 1) {
                target.get(0).add(uid);
                continue;
            }
            int at = t.stage(stageId).indexOfUid(uid);
            t = t.apply(new SplitStep(stageId, at, it.extent(), Collections.nCopies(n - 1, null), true));
            if (spatial) splitOf.put(uid, t.steps().size() - 1);
            for (int l = 0; l < n; l++)
                target.get(l).add(t.stage(stageId).leaves().get(at + l));
        }
        List<Integer> order = new ArrayList<>();
        if (structure.isEmpty()) {
            space.forEach(order::addAll);
            reduce.forEach(order::addAll);
        } else {
            int sc = 0, rc = 0;
            for (char c : structure.toCharArray()) order.addAll(c == 'S' ? space.get(sc++) : reduce.get(rc++));
        }
        if (m.isTile()) order.add(it0);
        order.add(jt);
        order.add(kt);
        Stage now = t.stage(stageId);
        List<Integer> perm = new ArrayList<>();
        for (int uid : order) perm.add(now.indexOfUid(uid));
        t = t.apply(new ReorderStep(stageId, perm));
        t = t.apply(new TensorizeStep(
                stageId,
                t.stage(stageId).indexOfUid(m.isTile() ? it0 : jt),
                m.intrinsic().name()));
        List<Integer> steps = new ArrayList<>();
        int intrinsicAxis = spatialAxes.indexOf(m.spatialUid());
        for (int uid : spatialAxes) {
            Integer step = splitOf.get(uid == m.spatialUid() ? jo : uid == m.rowUid() ? io : uid);
            if (step == null) return new Tiled(t, List.of(), intrinsicAxis, ej);
            steps.add(step);
        }
        return new Tiled(t, List.copyOf(steps), intrinsicAxis, ej);
    }

    private static LoopState split(LoopState s, int stageId, int uid, List<Integer> lengths) {
        Stage st = s.stage(stageId);
        int at = st.indexOfUid(uid);
        return s.apply(new SplitStep(stageId, at, st.all().get(uid).extent(), lengths, true));
    }

    private static List<List<Integer>> levels(int n) {
        List<List<Integer>> l = new ArrayList<>();
        for (int i = 0; i < n; i++) l.add(new ArrayList<>());
        return l;
    }
}
