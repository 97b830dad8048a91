package dev.kiln.autoschedule.sketch;

import dev.kiln.autoschedule.SearchTask;
import dev.kiln.autoschedule.analysis.AccessAnalyzer;
import dev.kiln.schedule.LoopState;
import java.util.List;

/**
 * A derivation rule of sketch generation (Ansor's SketchGenerationRule): it looks at one stage
 * of a state and either does not apply, or derives new states, each with the index of the stage
 * to work on next. The generator tries the rules in order on every state.
 */
public interface SketchRule {

    /** Whether a rule applies, and whether the rules after it are still tried on the same state. */
    enum Condition {
        /** The rule does not apply. */
        SKIP,
        /** The rule's states are kept and the next rules are tried too (branching). */
        APPLY,
        /** The rule's states are kept and no further rule is tried. */
        APPLY_AND_SKIP_REST
    }

    /** A derived state and the stage index the generator works on next (below 0: a finished sketch). */
    record Derivation(LoopState state, int nextStageId) {}

    /** A short name for messages and statistics. */
    String name();

    /**
     * Whether the rule applies to stage {@code stageId} of {@code state}; {@code access} analyses the state's
     * operations.
     */
    Condition condition(SearchTask task, AccessAnalyzer access, LoopState state, int stageId);

    /** The states the rule derives; called only when {@link #condition} is not {@link Condition#SKIP}. */
    List<Derivation> apply(SearchTask task, AccessAnalyzer access, LoopState state, int stageId);
}
