package dev.kiln.autoschedule.sketch;

import dev.kiln.autoschedule.SearchTask;
import dev.kiln.autoschedule.analysis.AccessAnalyzer;
import dev.kiln.autoschedule.analysis.StagePredicates;
import dev.kiln.schedule.ComputeInlineStep;
import dev.kiln.schedule.LoopState;
import dev.kiln.schedule.Stage;
import java.util.List;

/**
 * Inlines a stage that is neither an input, an output nor a reduction, when it is strictly
 * inlineable (on a GPU: whenever it can be); the other inlinable stages get their location from
 * the random annotation. Nothing else is tried on the stage.
 */
public record AlwaysInline() implements SketchRule {
    @Override
    public String name() {
        return "AlwaysInline";
    }

    @Override
    public Condition condition(SearchTask task, AccessAnalyzer access, LoopState state, int stageId) {
        Stage st = state.stage(stageId);
        if (st.isPlaceholder()
                || StagePredicates.isOutput(access, state, stageId)
                || StagePredicates.hasReduceIter(st)) {
            return Condition.SKIP;
        }
        // Kiln (like TE) cannot inline an operation with several outputs.
        if (st.op().outputs().size() > 1) return Condition.SKIP;
        return StagePredicates.isStrictlyInlineable(access, state, stageId)
                        || task.target().kind().isGpu()
                ? Condition.APPLY_AND_SKIP_REST
                : Condition.SKIP;
    }

    @Override
    public List<Derivation> apply(SearchTask task, AccessAnalyzer access, LoopState state, int stageId) {
        return List.of(new Derivation(state.apply(new ComputeInlineStep(stageId)), stageId - 1));
    }
}
