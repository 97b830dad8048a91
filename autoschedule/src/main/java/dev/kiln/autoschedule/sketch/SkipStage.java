package dev.kiln.autoschedule.sketch;

import dev.kiln.autoschedule.SearchTask;
import dev.kiln.autoschedule.analysis.AccessAnalyzer;
import dev.kiln.schedule.LoopState;
import java.util.List;

/** Leaves the stage as it is and moves on to the previous one; always applies, and comes last. */
public record SkipStage() implements SketchRule {
    @Override
    public String name() {
        return "SkipStage";
    }

    @Override
    public Condition condition(SearchTask task, AccessAnalyzer access, LoopState state, int stageId) {
        return Condition.APPLY;
    }

    @Override
    public List<Derivation> apply(SearchTask task, AccessAnalyzer access, LoopState state, int stageId) {
        return List.of(new Derivation(state, stageId - 1));
    }
}
