package dev.kiln.autoschedule.sketch;

import dev.kiln.autoschedule.SearchTask;
import dev.kiln.autoschedule.analysis.AccessAnalyzer;
import dev.kiln.autoschedule.analysis.StagePredicates;
import dev.kiln.schedule.LoopState;
import java.util.List;

/**
 * Tiles a stage with data reuse in several levels, by a structure string: "SSRSRS" on a CPU
 * (four spatial levels, two reduction levels, interleaved), "SSSRRSRS" on a GPU. Nothing else is
 * tried on the stage.
 */
public record MultiLevelTiling(String structure) implements SketchRule {
    /** Ansor's CPU structure. */
    public static final String CPU_STRUCTURE = "SSRSRS";
    /** Ansor's GPU structure. */
    public static final String GPU_STRUCTURE = "SSSRRSRS";

    @Override
    public String name() {
        return "MultiLevelTiling";
    }

    @Override
    public Condition condition(SearchTask task, AccessAnalyzer access, LoopState state, int stageId) {
        return StagePredicates.needsMultiLevelTiling(access, state, stageId)
                ? Condition.APPLY_AND_SKIP_REST
                : Condition.SKIP;
    }

    @Override
    public List<Derivation> apply(SearchTask task, AccessAnalyzer access, LoopState state, int stageId) {
        return List.of(new Derivation(
                MultiLevelTilingSupport.multiLevelTiling(state, stageId, structure)
                        .state(),
                stageId - 1));
    }
}
