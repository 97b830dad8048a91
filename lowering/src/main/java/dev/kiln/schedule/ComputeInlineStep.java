package dev.kiln.schedule;

/**
 * {@code CI}: substitutes a stage's body into its consumers, so it has no loops or buffer of its
 * own. Outputs, reductions, multi-output stages and stages with others computed inside them
 * cannot be inlined.
 */
public record ComputeInlineStep(int stageId) implements Step {

    @Override
    public LoopState applyTo(LoopState s) {
        Stage st = StepChecks.computeStage(s, stageId);
        if (st.output()) throw new ScheduleException("'" + st.name() + "' is an output and cannot be inlined");
        if (st.computeOp().isReduction()) {
            throw new ScheduleException("'" + st.name() + "' is a reduction and cannot be inlined into its consumers");
        }
        if (st.op().outputs().size() > 1) {
            throw new ScheduleException("'" + st.name() + "' has several outputs and cannot be inlined");
        }
        if (!s.attachedTo(stageId).isEmpty()) {
            throw new ScheduleException("stages "
                    + s.attachedTo(stageId).stream()
                            .map(i -> s.stages().get(i).name())
                            .toList() + " are computed inside '" + st.name() + "'; move them before inlining it");
        }
        return s.withStage(stageId, st.withComputeAt(ComputeAtKind.INLINED, -1, -1));
    }

    @Override
    public String describe(LoopState s) {
        return "compute_inline(" + StepChecks.stageName(s, stageId) + ")";
    }
}
