package dev.kiln.autoschedule.sketch;

import dev.kiln.autoschedule.SearchTask;
import dev.kiln.autoschedule.analysis.AccessAnalyzer;
import dev.kiln.autoschedule.analysis.StagePredicates;
import dev.kiln.schedule.LoopState;
import java.util.List;

/**
 * Kiln's rule for an input that is reduced row by row into the output, as a softmax or a layer norm of a
 * placeholder is: one more sketch with every stage between them (the reductions, their rfactor stages, the
 * element-wise stages) computed at the output's last leading loop, so each row is read from memory once and its
 * maximum, exponentials, sum and quotients are computed while it is in the cache. Ansor's compute-location
 * annotation can reach that program only by drawing the right place for each of the four or six stages at once;
 * the best 100-trial softmax programs kept the exponentials or the sum in a separate pass over the whole matrix
 * (fourteenth session).
 *
 * <p>It applies at a placeholder (the last stage the generator visits in the chain, so the reductions have had
 * their rfactor sketches) for which {@link RowChains#of} finds a chain with no stage that needs multi-level tiling
 * ({@link MultiLevelTilingWithRowFusion} handles those). Apply: the generator's other rules still make the sketch
 * without it. The annotation keeps the block ({@link RowChains#isRowFused}).
 */
public record FuseRowReductions() implements SketchRule {
    @Override
    public String name() {
        return "FuseRowReductions";
    }

    @Override
    public Condition condition(SearchTask task, AccessAnalyzer access, LoopState state, int stageId) {
        if (!state.stage(stageId).isPlaceholder() || task.target().kind().isGpu()) return Condition.SKIP;
        RowChains.RowChain chain = RowChains.of(access, state, stageId);
        if (chain == null) return Condition.SKIP;
        for (int q : chain.between())
            if (StagePredicates.needsMultiLevelTiling(access, state, q)) return Condition.SKIP;
        return Condition.APPLY;
    }

    @Override
    public List<Derivation> apply(SearchTask task, AccessAnalyzer access, LoopState state, int stageId) {
        RowChains.RowChain chain = RowChains.of(access, state, stageId);
        int attach = state.stage(chain.output()).iters().size() - 2;
        return List.of(new Derivation(RowChains.computeBetweenAt(state, chain, attach), stageId - 1));
    }
}
