package dev.kiln.autoschedule.sketch;

import dev.kiln.autoschedule.SearchTask;
import dev.kiln.autoschedule.analysis.AccessAnalyzer;
import dev.kiln.autoschedule.analysis.StagePredicates;
import dev.kiln.schedule.ComputeAtStep;
import dev.kiln.schedule.FollowSplitStep;
import dev.kiln.schedule.Iter;
import dev.kiln.schedule.LoopState;
import dev.kiln.schedule.ReorderStep;
import dev.kiln.schedule.Stage;
import java.util.ArrayList;
import java.util.List;

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
 * It applies when the stage has no cache-write stage and {@link RowChains#of} finds the chain: a single root output of
 * the stage's shape, reached from the stage only through stages that keep every leading axis of it (so each block
 * of rows needs only that block of the stage) and include a reduction. Apply: the other rules still make their
 * sketches of the same state. The stages of the block keep their place in the annotation
 * ({@link RowChains#isRowFused}); tile sizes, the rfactor split, vectorisation and unrolling are sampled as for
 * any sketch.
 */
public record MultiLevelTilingWithRowFusion(String structure) implements SketchRule {
    /** The CPU rule: structure "SSRSRS". */
    public static MultiLevelTilingWithRowFusion cpu() {
        return new MultiLevelTilingWithRowFusion(MultiLevelTiling.CPU_STRUCTURE);
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
        return RowChains.of(access, state, stageId) == null ? Condition.SKIP : Condition.APPLY;
    }

    @Override
    public List<Derivation> apply(SearchTask task, AccessAnalyzer access, LoopState state, int stageId) {
        RowChains.RowChain chain = RowChains.of(access, state, stageId);
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
        t = RowChains.computeBetweenAt(t, chain, attach);
        t = t.apply(new ComputeAtStep(stageId, out, attach));
        return List.of(new Derivation(t, stageId - 1));
    }
}
