package dev.kiln.autoschedule.sketch;

import dev.kiln.autoschedule.SearchTask;
import dev.kiln.autoschedule.analysis.AccessAnalyzer;
import dev.kiln.autoschedule.analysis.StagePredicates;
import dev.kiln.schedule.CacheWriteStep;
import dev.kiln.schedule.LoopState;
import java.util.List;

/**
 * For a stage with data reuse and no element-wise consumer to fuse into, adds a local
 * cache-write stage {@code C.local} and works on the same index again: the new stage there has
 * the copy as its element-wise consumer, so tiling with fusion applies to it. On a CPU the
 * states without the cache are kept too (Apply); on a GPU only the cached one.
 */
public record AddCacheWrite() implements SketchRule {
    @Override
    public String name() {
        return "AddCacheWrite";
    }

    @Override
    public Condition condition(SearchTask task, AccessAnalyzer access, LoopState state, int stageId) {
        if (StagePredicates.needsMultiLevelTiling(access, state, stageId)
                && StagePredicates.singleElementwiseMatchedConsumer(access, state, stageId) < 0) {
            return task.target().kind().isGpu() ? Condition.APPLY_AND_SKIP_REST : Condition.APPLY;
        }
        return Condition.SKIP;
    }

    @Override
    public List<Derivation> apply(SearchTask task, AccessAnalyzer access, LoopState state, int stageId) {
        return List.of(new Derivation(state.apply(new CacheWriteStep(stageId, "local")), stageId));
    }
}
