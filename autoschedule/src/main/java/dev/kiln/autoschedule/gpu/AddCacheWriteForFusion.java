package dev.kiln.autoschedule.gpu;

import dev.kiln.autoschedule.SearchTask;
import dev.kiln.autoschedule.analysis.AccessAnalyzer;
import dev.kiln.autoschedule.analysis.StagePredicates;
import dev.kiln.autoschedule.sketch.SketchRule;
import dev.kiln.schedule.CacheWriteStep;
import dev.kiln.schedule.ComputeInlineStep;
import dev.kiln.schedule.LoopState;
import java.util.List;

/**
 * GPU only: before a stage with data reuse is tiled and fused into its element-wise consumer
 * (a conv2d into its bias and relu), its computation moves into a {@code .local} cache-write stage
 * and the copy back is inlined into the consumer, so the consumer reads the accumulators
 * directly. In TVM the fused stage lands in registers because a buffer computed inside a
 * threadIdx loop gets local scope by inference; Kiln's buffers keep the scope their stage has, so
 * the scope is made explicit here. The same stage index (now the local stage) is worked on next,
 * where MultiLevelTilingWithFusion tiles it "SSSRRSRS" and computes it at the consumer's
 * threadIdx level. Nothing else is tried.
 */
public record AddCacheWriteForFusion() implements SketchRule {
    @Override
    public String name() {
        return "AddCacheWriteForFusion";
    }

    @Override
    public Condition condition(SearchTask task, AccessAnalyzer access, LoopState state, int stageId) {
        if (!task.target().kind().isGpu() || !StagePredicates.needsMultiLevelTiling(access, state, stageId))
            return Condition.SKIP;
        if (StagePredicates.hasCacheWriteStage(state, stageId) || StagePredicates.isOutput(access, state, stageId))
            return Condition.SKIP;
        if (state.stage(stageId).op().outputs().size() != 1) return Condition.SKIP;
        int consumer = StagePredicates.singleElementwiseMatchedConsumer(access, state, stageId);
        return consumer >= 0 ? Condition.APPLY_AND_SKIP_REST : Condition.SKIP;
    }

    @Override
    public List<Derivation> apply(SearchTask task, AccessAnalyzer access, LoopState state, int stageId) {
        LoopState s = state.apply(new CacheWriteStep(stageId, "local"));
        // the local stage is at stageId, the copy back right after it
        s = s.apply(new ComputeInlineStep(stageId + 1));
        return List.of(new Derivation(s, stageId));
    }
}
