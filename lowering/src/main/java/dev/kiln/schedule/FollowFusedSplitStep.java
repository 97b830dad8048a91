package dev.kiln.schedule;

import java.util.List;

/**
 * {@code FFSP}: splits a loop in two by the product, over several earlier split steps, of their
 * lengths at {@code level} (as a factor, or as a number of parts). Cooperative fetching uses it so
 * that the loader's thread count equals the block's.
 */
public record FollowFusedSplitStep(int stageId, int iterId, List<Integer> srcStepIds, int level, boolean factorOrNparts)
        implements Step {
    public FollowFusedSplitStep {
        srcStepIds = List.copyOf(srcStepIds);
    }

    /** The length this step splits by, or null while a source length is undecided. */
    public Integer length(LoopState s) {
        Integer f = 1;
        for (int id : srcStepIds) {
            if (id < 0 || id >= s.steps().size() || !(s.steps().get(id) instanceof SplitStep sp)) {
                throw new ScheduleException("follow_fused_split: step " + id + " is not a split step");
            }
            if (level < 0 || level >= sp.lengths().size()) {
                throw new ScheduleException("follow_fused_split: step " + id + " has no length at level " + level);
            }
            Integer l = sp.lengths().get(level);
            f = f == null || l == null ? null : f * l;
        }
        return f;
    }

    @Override
    public LoopState applyTo(LoopState s) {
        Stage st = StepChecks.computeStage(s, stageId);
        Iter it = StepChecks.loop(st, iterId);
        return new SplitStep(stageId, iterId, it.extent(), java.util.Arrays.asList(length(s)), factorOrNparts)
                .applyTo(s);
    }

    @Override
    public String describe(LoopState s) {
        return "follow_fused_split(" + StepChecks.loopName(s, stageId, iterId) + ", steps " + srcStepIds + ", level "
                + level + ")";
    }
}
