package dev.kiln.autoschedule.sketch;

import dev.kiln.autoschedule.SearchTask;
import dev.kiln.autoschedule.analysis.AccessAnalyzer;
import dev.kiln.autoschedule.analysis.StagePredicates;
import dev.kiln.schedule.FuseStep;
import dev.kiln.schedule.Iter;
import dev.kiln.schedule.IterKind;
import dev.kiln.schedule.LoopState;
import dev.kiln.schedule.ReorderStep;
import dev.kiln.schedule.RfactorStep;
import dev.kiln.schedule.SplitStep;
import dev.kiln.schedule.Stage;
import java.util.ArrayList;
import java.util.List;

/**
 * For a reduction with too little parallelism in its spatial loops
 * ({@link StagePredicates#needsRfactor}) and no cache-write stage: fuses its reduction loops,
 * splits the result in two and factors out either part, giving two sketches. The factored part
 * becomes a spatial axis of a new stage {@code C.rf} placed after the original spatial axes; when
 * it is the inner part it is also moved innermost so it can be vectorised. The split length is 1
 * here (rfactor needs decided sizes); {@link SketchGenerator} then marks it undecided so the
 * annotation samples it. The states without rfactor are kept too (Apply). The rf stage gets no
 * further rules: the next stage is the one before it.
 */
public record AddRfactor() implements SketchRule {
    @Override
    public String name() {
        return "AddRfactor";
    }

    @Override
    public Condition condition(SearchTask task, AccessAnalyzer access, LoopState state, int stageId) {
        if (state.stage(stageId).isPlaceholder()
                || !state.stage(stageId).computeOp().isReduction()) return Condition.SKIP;
        return StagePredicates.needsRfactor(access, task.hardware(), state, stageId)
                        && !StagePredicates.hasCacheWriteStage(state, stageId)
                ? Condition.APPLY
                : Condition.SKIP;
    }

    @Override
    public List<Derivation> apply(SearchTask task, AccessAnalyzer access, LoopState state, int stageId) {
        Stage st = state.stage(stageId);
        List<Integer> reduce = new ArrayList<>();
        int nSpace = 0;
        for (int i = 0; i < st.iters().size(); i++) {
            Iter it = st.iter(i);
            if (it.kind() == IterKind.SPATIAL) nSpace++;
            else reduce.add(i);
        }
        LoopState t = state;
        if (reduce.size() > 1) t = t.apply(new FuseStep(stageId, reduce));
        int fused = reduce.get(0);
        Iter r = t.stage(stageId).iter(fused);
        t = t.apply(new SplitStep(stageId, fused, r.extent(), List.of(1), true));
        List<Derivation> out = new ArrayList<>();
        for (int part = 0; part < 2; part++) {
            LoopState f = t.apply(new RfactorStep(stageId, fused + part, nSpace));
            if (part == 1) {
                int n = f.stage(stageId).iters().size();
                List<Integer> order = new ArrayList<>();
                for (int i = 0; i < n; i++) if (i != nSpace) order.add(i);
                order.add(nSpace);
                f = f.apply(new ReorderStep(stageId, order));
            }
            out.add(new Derivation(f, stageId - 1));
        }
        return out;
    }
}
