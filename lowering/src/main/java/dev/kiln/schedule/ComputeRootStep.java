package dev.kiln.schedule;

/** {@code CR}: computes a stage at root, in its own top-level loop nest over its whole output. */
public record ComputeRootStep(int stageId) implements Step {

    @Override
    public LoopState applyTo(LoopState s) {
        Stage st = StepChecks.computeStage(s, stageId);
        return s.withStage(stageId, st.withComputeAt(ComputeAtKind.ROOT, -1, -1));
    }

    @Override
    public String describe(LoopState s) {
        return "compute_root(" + StepChecks.stageName(s, stageId) + ")";
    }
}
