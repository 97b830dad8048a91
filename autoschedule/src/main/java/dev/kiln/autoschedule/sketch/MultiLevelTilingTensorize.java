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
 */
public record MultiLevelTilingTensorize(String structure) implements SketchRule {
    private static final Map<String, Set<String>> OFFERED = new ConcurrentHashMap<>();

    /** The CPU rule. */
    public static MultiLevelTilingTensorize cpu() {
        return new MultiLevelTilingTensorize(MultiLevelTiling.CPU_STRUCTURE);
    }

    @Override
    public String name() {
        return "MultiLevelTilingTensorize";
    }

    /** A match: the intrinsic, and the uids of the stage's spatial and reduction axes it takes. */
    record Match(TensorIntrinsic intrinsic, int spatialUid, int reduceUid) {}

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
        return match(task, state, stageId) == null ? Condition.SKIP : Condition.APPLY_AND_SKIP_REST;
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
        Match m = match(task, state, stageId);
        if (m == null) throw new KilnException("no tensor intrinsic matches stage " + stageId);
        Tiled base = tiled(state, stageId, m, structure);
        List<Derivation> out = new ArrayList<>();
        out.add(new Derivation(base.state(), stageId - 1));
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

    /** The first offered intrinsic (by name) and axes for which the tensorize step accepts the stage. */
    static Match match(SearchTask task, LoopState s, int stageId) {
        Stage st = s.stage(stageId);
        if (st.isPlaceholder() || st.computeAt() != ComputeAtKind.ROOT || st.isTiled() || st.tensorized() != null) {
            return null;
        }
        Set<String> offered = offered(task.target());
        for (TensorIntrinsic in : TensorIntrinsics.availableOn(task.target())) {
            if (!offered.contains(in.name())) continue;
            if (in.op().axes().size() != 1 || in.op().reduceAxes().size() != 1) continue;
            // cheap test first: the accumulator's type
            if (st.op().outputs().get(0).dtype()
                    != in.pattern().outputs().get(0).dtype()) continue;
            long ej = in.loopExtents().get(0), ek = in.loopExtents().get(1);
            for (Iter j : st.iters()) {
                if (j.kind() != IterKind.SPATIAL || j.extent() == null || j.extent() % ej != 0) continue;
                for (Iter k : st.iters()) {
                    if (k.kind() != IterKind.REDUCE || k.extent() == null || k.extent() % ek != 0) continue;
                    Match m = new Match(in, j.uid(), k.uid());
                    try {
                        tile(s, stageId, m, "");
                        return m;
                    } catch (KilnException e) {
                        // this intrinsic does not fit these axes (pattern, layout or alignment); try the next
                    }
                }
            }
        }
        return null;
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
        long ej = m.intrinsic().loopExtents().get(0),
                ek = m.intrinsic().loopExtents().get(1);
        // a split replaces its loop by the parts, in its place
        LoopState t = s;
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
            if (uid == jt || uid == kt) continue;
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
        order.add(jt);
        order.add(kt);
        Stage now = t.stage(stageId);
        List<Integer> perm = new ArrayList<>();
        for (int uid : order) perm.add(now.indexOfUid(uid));
        t = t.apply(new ReorderStep(stageId, perm));
        t = t.apply(new TensorizeStep(
                stageId, t.stage(stageId).indexOfUid(jt), m.intrinsic().name()));
        List<Integer> steps = new ArrayList<>();
        int intrinsicAxis = spatialAxes.indexOf(m.spatialUid());
        for (int uid : spatialAxes) {
            Integer step = splitOf.get(uid == m.spatialUid() ? jo : uid);
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
