package dev.kiln.autoschedule.gpu;

import dev.kiln.autoschedule.SearchTask;
import dev.kiln.autoschedule.analysis.AccessAnalyzer;
import dev.kiln.autoschedule.analysis.StagePredicates;
import dev.kiln.autoschedule.sketch.SketchRule;
import dev.kiln.schedule.CacheReadStep;
import dev.kiln.schedule.ComputeAtStep;
import dev.kiln.schedule.LoopState;
import dev.kiln.schedule.ScheduleException;
import java.util.ArrayList;
import java.util.List;

/**
 * Ansor's AddCacheRead (GPU): a stage read directly by a stage that needs multi-level tiling gets
 * a {@code .shared} copy for each such reader, computed at the reader's "last reduction loop of
 * the outermost reduction tile" ({@link ReduceTiles#outermostTileEnd}, {@code k.0} for a matmul),
 * so that every tile of the reduction is fetched into shared memory once per block. The same
 * stage is worked on again, where the rule no longer applies (its reader is the copy now) and the
 * others do (an input padding stage is then inlined into its copy). Nothing else is tried.
 */
public record AddCacheReadShared() implements SketchRule {
    @Override
    public String name() {
        return "AddCacheRead";
    }

    @Override
    public Condition condition(SearchTask task, AccessAnalyzer access, LoopState state, int stageId) {
        List<Integer> consumers = StagePredicates.consumers(state, stageId);
        if (consumers.isEmpty()) return Condition.SKIP;
        int target = consumers.getFirst();
        if (!StagePredicates.needsMultiLevelTiling(access, state, target)) return Condition.SKIP;
        if (StagePredicates.hasCrossThreadReduction(state, target)) return Condition.SKIP;
        if (!state.directProducers(target).contains(stageId)) return Condition.SKIP;
        if (state.stage(stageId).op().outputs().size() != 1) return Condition.SKIP;
        if (ReduceTiles.outermostTileEnd(state.stage(target)) < 0) return Condition.SKIP;
        return Condition.APPLY_AND_SKIP_REST;
    }

    @Override
    public List<Derivation> apply(SearchTask task, AccessAnalyzer access, LoopState state, int stageId) {
        LoopState s = state;
        List<Integer> readers = new ArrayList<>();
        for (int c : StagePredicates.consumers(state, stageId))
            if (state.directConsumers(stageId).contains(c)) readers.add(c);
        // each reader gets its own copy; stage ids after stageId shift by one per copy inserted
        int shift = 0;
        for (int reader : readers) {
            int r = reader + shift;
            s = s.apply(new CacheReadStep(stageId, "shared", List.of(r)));
            int added = stageId + 1;
            r++;
            shift++;
            int at = ReduceTiles.outermostTileEnd(s.stage(r));
            if (at < 0)
                throw new ScheduleException("reader '" + s.stage(r).name() + "' has no reduction loop to fetch at");
            s = s.apply(new ComputeAtStep(added, r, at));
        }
        return List.of(new Derivation(s, stageId));
    }
}
