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
 * It applies when {@link RowChains#of} finds the chain: a single root output of the stage's shape, reached from the
 * stage only through stages that keep every leading axis of it (so each block of rows needs only that block of the
 * stage) and include a reduction. Apply: the other rules still make their sketches of the same state.
 *
 * <p>It also applies to the computing stage a cache write inserted ({@code scores.local}, whose element-wise consumer
 * is the copy {@code scores}) when the copy has the chain: the copy is computed per block of output rows as above,
 * follows the computing stage's first three spatial levels, and the computing stage is computed at the copy's
 * level-3 loop, so its buffer is the innermost tile alone, the register tile, which sums the whole reduction before
 * the copy stores it. (Computed at level 2, as {@link MultiLevelTilingWithFusion}'s deepest CPU fusion, its buffer
 * also spans the level-3 tile, which the register tile's reduction loops leave between them: the search met many
 * programs with buffers too large for the registers, spilled and slow to compile, and ran into time-outs.) Without
 * the cache the block's accumulators go through memory after every step of the outer reduction level: the best of
 * 1000 attention programs (TBS 1,128,12,128 at one
 * thread, twenty-third session) ran at 0.43 ms, where the batch matmul alone reached 226 GFLOP/s (0.22 ms for its
 * 12 heads) and oneDNN the whole workload in 0.31 ms. The stages of the block keep their place in the annotation
 * ({@link RowChains#isRowFused}); tile sizes, the rfactor split, vectorisation and unrolling are sampled as for
 * any sketch.
 */
public record MultiLevelTilingWithRowFusion(String structure) implements SketchRule {
    /** The CPU rule: structure "SSRSRS". */
    public static MultiLevelTilingWithRowFusion cpu() {
        return new MultiLevelTilingWithRowFusion(MultiLevelTiling.CPU_STRUCTURE);
    }

    /** The spatial levels the cache-write copy follows: the computing stage's buffer is its innermost tile. */
    static final int CACHED_LEVEL = 3;

    @Override
    public String name() {
        return "MultiLevelTilingWithRowFusion";
    }

    @Override
    public Condition condition(SearchTask task, AccessAnalyzer access, LoopState state, int stageId) {
        if (!StagePredicates.needsMultiLevelTiling(access, state, stageId)
                || task.target().kind().isGpu()) return Condition.SKIP;
        return rowFused(access, state, stageId) == null ? Condition.SKIP : Condition.APPLY;
    }

    /** The stage computed per block of output rows, and its chain to the output. */
    private record RowFused(int stage, RowChains.RowChain chain) {}

    /**
     * {@code stageId} itself where it has the chain, its cache-write copy where {@code stageId} is the computing stage
     * of a cache write and the copy has the chain; null otherwise.
     */
    private static RowFused rowFused(AccessAnalyzer access, LoopState state, int stageId) {
        int stage = stageId;
        if (StagePredicates.hasCacheWriteStage(state, stageId)) {
            stage = StagePredicates.singleElementwiseMatchedConsumer(access, state, stageId);
            if (stage < 0 || !MultiLevelTilingWithFusion.followable(state, stageId, stage)) return null;
        }
        RowChains.RowChain chain = RowChains.of(access, state, stage);
        return chain == null ? null : new RowFused(stage, chain);
    }

    @Override
    public List<Derivation> apply(SearchTask task, AccessAnalyzer access, LoopState state, int stageId) {
        RowFused fused = rowFused(access, state, stageId);
        int rowStage = fused.stage();
        RowChains.RowChain chain = fused.chain();
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
        if (rowStage != stageId) { // the copy follows three levels; the register tile is computed inside them
            t = MultiLevelTilingSupport.followTiling(t, rowStage, base.spatialSplitSteps(), CACHED_LEVEL);
            t = t.apply(new ComputeAtStep(
                    stageId, rowStage, CACHED_LEVEL * base.spatialSplitSteps().size() - 1));
        }
        t = RowChains.computeBetweenAt(t, chain, attach);
        t = t.apply(new ComputeAtStep(rowStage, out, attach));
        return List.of(new Derivation(t, stageId - 1));
    }
}
