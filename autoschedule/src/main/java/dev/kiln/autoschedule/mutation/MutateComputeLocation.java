package dev.kiln.autoschedule.mutation;

import dev.kiln.autoschedule.Candidate;
import dev.kiln.autoschedule.SearchTask;
import dev.kiln.autoschedule.analysis.AccessAnalyzer;
import dev.kiln.autoschedule.analysis.StagePredicates;
import dev.kiln.schedule.ComputeAtStep;
import dev.kiln.schedule.LoopState;
import dev.kiln.schedule.Step;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/**
 * Ansor's MutateComputeLocation: a compute_at step, picked at random among those that move a
 * stage that is neither tiled nor in need of multi-level tiling, gets another location, drawn
 * from the stage's {@link StagePredicates#computeLocationCandidates candidates} in the program;
 * the whole history is replayed with the new step. Steps followed by a stage-adding step are not
 * candidates (their stage numbers would need translating).
 */
public record MutateComputeLocation() implements MutationRule {
    @Override
    public String name() {
        return "MutateComputeLocation";
    }

    @Override
    public Candidate apply(SearchTask task, Candidate parent, SplittableRandom rng) {
        List<Step> steps = parent.schedule().steps();
        LoopState s = parent.state();
        int lastAdding = -1;
        for (int i = 0; i < steps.size(); i++) if (Children.addsStage(steps.get(i))) lastAdding = i;
        AccessAnalyzer access = null;
        List<Integer> cas = new ArrayList<>();
        for (int i = lastAdding + 1; i < steps.size(); i++) {
            if (!(steps.get(i) instanceof ComputeAtStep ca)) continue;
            if (StagePredicates.isTiled(s.stage(ca.stageId()))) continue;
            if (access == null) access = AccessAnalyzer.of(s);
            if (StagePredicates.needsMultiLevelTiling(access, s, ca.stageId())) continue;
            cas.add(i);
        }
        if (cas.isEmpty()) return null;
        int at = cas.get(rng.nextInt(cas.size()));
        ComputeAtStep ca = (ComputeAtStep) steps.get(at);
        List<StagePredicates.Location> locations =
                new ArrayList<>(StagePredicates.computeLocationCandidates(s, ca.stageId()));
        locations.removeIf(l -> l.stage() == ca.targetStageId() && l.iter() == ca.targetIterId());
        if (locations.isEmpty()) return null;
        StagePredicates.Location to = locations.get(rng.nextInt(locations.size()));
        List<Step> out = new ArrayList<>(steps);
        out.set(at, new ComputeAtStep(ca.stageId(), to.stage(), to.iter()));
        return Children.of(task, out);
    }
}
