package dev.kiln.schedule;

import java.util.ArrayList;
import java.util.List;

/**
 * {@code FSP}: splits a loop like an earlier split step {@code srcStepId}, into {@code nSplit + 1}
 * loops: the source's first {@code nSplit - 1} lengths, then the product of the rest. It tiles a
 * fused consumer exactly like its producer, and follows the producer's tile sizes when they change.
 */
public record FollowSplitStep(int stageId, int iterId, int srcStepId, int nSplit) implements Step {

    /** The lengths this step splits by, read from the source step in the state's history. */
    public List<Integer> lengths(LoopState s) {
        SplitStep src = source(s);
        if (nSplit < 1 || nSplit > src.lengths().size()) {
            throw new ScheduleException("follow_split with " + nSplit + " parts of step " + srcStepId + ", which has "
                    + src.lengths().size() + " lengths");
        }
        List<Integer> out = new ArrayList<>(src.lengths().subList(0, nSplit - 1));
        Integer rest = 1;
        for (Integer l : src.lengths().subList(nSplit - 1, src.lengths().size())) {
            rest = rest == null || l == null ? null : rest * l;
        }
        out.add(rest);
        return out;
    }

    private SplitStep source(LoopState s) {
        if (srcStepId < 0 || srcStepId >= s.steps().size() || !(s.steps().get(srcStepId) instanceof SplitStep sp)) {
            throw new ScheduleException("follow_split: step " + srcStepId + " is not a split step");
        }
        return sp;
    }

    @Override
    public LoopState applyTo(LoopState s) {
        Stage st = StepChecks.computeStage(s, stageId);
        Iter it = StepChecks.loop(st, iterId);
        return new SplitStep(stageId, iterId, it.extent(), lengths(s), true).applyTo(s);
    }

    @Override
    public String describe(LoopState s) {
        return "follow_split(" + StepChecks.loopName(s, stageId, iterId) + ", step " + srcStepId + ", " + nSplit + ")";
    }
}
