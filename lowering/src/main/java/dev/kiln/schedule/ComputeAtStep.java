package dev.kiln.schedule;

/**
 * {@code CA}: computes a stage inside loop {@code targetIterId} of stage {@code targetStageId},
 * just the region its consumers need there. Every consumer must run inside that loop: the
 * target itself, or a stage computed (transitively) inside the target at that loop or deeper.
 */
public record ComputeAtStep(int stageId, int targetStageId, int targetIterId) implements Step {

    @Override
    public LoopState applyTo(LoopState s) {
        Stage st = StepChecks.computeStage(s, stageId);
        Stage target = StepChecks.computeStage(s, targetStageId);
        Iter loop = StepChecks.loop(target, targetIterId);
        if (stageId == targetStageId) throw new ScheduleException("a stage cannot be computed inside itself");
        if (st.output()) throw new ScheduleException("'" + st.name() + "' is an output and must stay at root");
        if (target.computeAt() == ComputeAtKind.INLINED) {
            throw new ScheduleException("target '" + target.name() + "' is inlined and has no loops");
        }
        for (int t = targetStageId; t >= 0; ) {
            if (t == stageId) {
                throw new ScheduleException(
                        "'" + target.name() + "' is computed inside '" + st.name() + "'; that would be a cycle");
            }
            Stage x = s.stages().get(t);
            t = x.computeAt() == ComputeAtKind.ITER ? x.attachStage() : -1;
        }
        for (int c : s.consumers(stageId)) {
            if (!encloses(s, targetStageId, loop.uid(), c)) {
                throw new ScheduleException("loop '" + loop.name() + "' of '" + target.name() + "' does not enclose '"
                        + s.stages().get(c).name() + "', which reads '" + st.name() + "'");
            }
        }
        return s.withStage(stageId, st.withComputeAt(ComputeAtKind.ITER, targetStageId, loop.uid()));
    }

    /** Whether stage {@code c} runs inside loop {@code uid} of stage {@code target}. */
    static boolean encloses(LoopState s, int target, int uid, int c) {
        if (c == target) return true;
        int child = c;
        while (true) {
            Stage x = s.stages().get(child);
            if (x.computeAt() != ComputeAtKind.ITER) return false;
            int parent = x.attachStage();
            if (parent == target) {
                Stage t = s.stages().get(target);
                return t.indexOfUid(x.attachIter()) >= t.indexOfUid(uid);
            }
            child = parent;
        }
    }

    @Override
    public String describe(LoopState s) {
        return "compute_at(" + StepChecks.stageName(s, stageId) + " -> "
                + StepChecks.loopName(s, targetStageId, targetIterId) + ")";
    }
}
