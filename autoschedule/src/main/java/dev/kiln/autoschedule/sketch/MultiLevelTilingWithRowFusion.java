package dev.kiln.autoschedule.sketch;

import dev.kiln.autoschedule.SearchTask;
import dev.kiln.autoschedule.analysis.AccessAnalyzer;
import dev.kiln.autoschedule.analysis.StagePredicates;
import dev.kiln.schedule.ComputeAtKind;
import dev.kiln.schedule.ComputeAtStep;
import dev.kiln.schedule.FollowSplitStep;
import dev.kiln.schedule.Iter;
import dev.kiln.schedule.IterKind;
import dev.kiln.schedule.LoopState;
import dev.kiln.schedule.ReorderStep;
import dev.kiln.schedule.Stage;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;

/**
 * Kiln's rule for a stage with data reuse whose result is reduced row by row before the output: attention scores
 * under a softmax ({@code softmax(Q K^T)}), a dense layer under a layer norm. Ansor tiles such a stage alone
 * (the reductions read every column of a row, so its element-wise fusion does not apply) and the whole result goes
 * through memory between the matmul and each pass of the row reductions. This rule computes the stage, and every
 * stage between it and the output, per block of output rows:
 *
 * <ul>
 *   <li>the stage is tiled "SSRSRS" as {@link MultiLevelTiling};
 *   <li>the output's leading axes (all but the last) follow the stage's outermost split, so a block of rows of the
 *       output covers exactly the stage's tile below its outermost level; the last axis stays whole;
 *   <li>every stage between (the reductions, their rfactor stages, the element-wise stages in between) and then
 *       the stage itself are computed at the output's last row-block loop, in a buffer of one block.
 * </ul>
 *
 * It applies when the stage has no cache-write stage and {@link #rowChain} finds the chain: a single root output of
 * the stage's shape, reached from the stage only through stages that keep every leading axis of it (so each block
 * of rows needs only that block of the stage) and include a reduction. Apply: the other rules still make their
 * sketches of the same state. The stages of the block keep their place in the annotation
 * ({@link #isRowFused}); tile sizes, the rfactor split, vectorisation and unrolling are sampled as for any sketch.
 */
public record MultiLevelTilingWithRowFusion(String structure) implements SketchRule {
    /** The CPU rule: structure "SSRSRS". */
    public static MultiLevelTilingWithRowFusion cpu() {
        return new MultiLevelTilingWithRowFusion(MultiLevelTiling.CPU_STRUCTURE);
    }

    /** The stages of a row chain: the output and, in stage order, those between the tiled stage and it. */
    public record RowChain(int output, List<Integer> between) {
        public RowChain {
            between = List.copyOf(between);
        }
    }

    @Override
    public String name() {
        return "MultiLevelTilingWithRowFusion";
    }

    @Override
    public Condition condition(SearchTask task, AccessAnalyzer access, LoopState state, int stageId) {
        if (!StagePredicates.needsMultiLevelTiling(access, state, stageId)
                || StagePredicates.hasCacheWriteStage(state, stageId)
                || task.target().kind().isGpu()) return Condition.SKIP;
        return rowChain(access, state, stageId) == null ? Condition.SKIP : Condition.APPLY;
    }

    @Override
    public List<Derivation> apply(SearchTask task, AccessAnalyzer access, LoopState state, int stageId) {
        RowChain chain = rowChain(access, state, stageId);
        MultiLevelTilingSupport.Tiled base = MultiLevelTilingSupport.multiLevelTiling(state, stageId, structure);
        int out = chain.output();
        int rows = state.stage(out).iters().size() - 1;
        LoopState t = base.state();
        List<Integer> outer = new ArrayList<>(), inner = new ArrayList<>();
        for (int k = 0; k < rows; k++) {
            Iter it = t.stage(out).iters().get(outer.size() + inner.size());
            int at = t.stage(out).indexOfUid(it.uid());
            t = t.apply(new FollowSplitStep(out, at, base.spatialSplitSteps().get(k), 1));
            outer.add(t.stage(out).leaves().get(at));
            inner.add(t.stage(out).leaves().get(at + 1));
        }
        List<Integer> order = new ArrayList<>();
        Stage o = t.stage(out);
        for (int uid : outer) order.add(o.indexOfUid(uid));
        for (int uid : inner) order.add(o.indexOfUid(uid));
        order.add(o.iters().size() - 1);
        t = t.apply(new ReorderStep(out, order));
        int attach = rows - 1;
        for (int k = chain.between().size() - 1; k >= 0; k--) {
            int q = chain.between().get(k);
            if (t.stage(q).computeAt() != ComputeAtKind.INLINED) t = t.apply(new ComputeAtStep(q, out, attach));
        }
        t = t.apply(new ComputeAtStep(stageId, out, attach));
        return List.of(new Derivation(t, stageId - 1));
    }

    /**
     * The chain from stage {@code id} to the output it is reduced into row by row, or null: every stage that reads
     * {@code id} (directly or through others) is a root compute stage, exactly one of them is an output, that output
     * has {@code id}'s shape (rank 2 or more), only spatial loops and none split yet, at least one stage between
     * reduces, and every path from {@code id} to the output keeps its leading {@code rank - 1} axes
     * ({@link AccessAnalyzer#numCommonOuterIteratorsPath}).
     */
    public static RowChain rowChain(AccessAnalyzer access, LoopState s, int id) {
        Stage p = s.stage(id);
        if (p.isPlaceholder() || p.computeAt() != ComputeAtKind.ROOT) return null;
        TreeSet<Integer> reach = new TreeSet<>();
        List<Integer> todo = new ArrayList<>(StagePredicates.consumers(s, id));
        while (!todo.isEmpty()) {
            int c = todo.remove(todo.size() - 1);
            if (reach.add(c)) todo.addAll(StagePredicates.consumers(s, c));
        }
        int out = -1;
        boolean reduces = false;
        for (int c : reach) {
            Stage st = s.stage(c);
            if (st.isPlaceholder() || st.computeAt() != ComputeAtKind.ROOT) return null;
            if (StagePredicates.isOutput(access, s, c)) {
                if (out >= 0) return null;
                out = c;
            } else if (StagePredicates.hasReduceIter(st)) {
                reduces = true;
            }
        }
        if (out < 0 || !reduces || out != reach.last()) return null;
        Stage o = s.stage(out);
        List<Long> shape = p.op().output(0).shape().dims();
        int rank = shape.size();
        if (rank < 2 || !o.op().output(0).shape().dims().equals(shape)) return null;
        if (StagePredicates.hasReduceIter(o)
                || StagePredicates.isTiled(o)
                || o.iters().size() != rank) return null;
        for (Iter it : o.iters()) if (it.kind() != IterKind.SPATIAL) return null;
        if (access.numCommonOuterIteratorsPath(p.op(), o.op()) < rank - 1) return null;
        List<Integer> between = new ArrayList<>(reach);
        between.remove(Integer.valueOf(out));
        return new RowChain(out, between);
    }

    /**
     * Whether stage {@code id} was placed by this rule: it is computed at a loop of a root stage where a stage with
     * data reuse is computed too. The annotation keeps such stages where the sketch put them (moving one out of the
     * block would leave the tiled stage computed inside a loop that no longer encloses its readers).
     */
    public static boolean isRowFused(AccessAnalyzer access, LoopState s, int id) {
        Stage st = s.stage(id);
        if (st.computeAt() != ComputeAtKind.ITER) return false;
        int target = st.attachStage();
        if (s.stage(target).computeAt() != ComputeAtKind.ROOT) return false;
        for (int other : s.attachedTo(target)) {
            Stage o = s.stage(other);
            if (other != id
                    && o.attachIter() == st.attachIter()
                    && StagePredicates.needsMultiLevelTiling(access, s, other)
                    && StagePredicates.isTiled(o)) return true;
        }
        return false;
    }
}
