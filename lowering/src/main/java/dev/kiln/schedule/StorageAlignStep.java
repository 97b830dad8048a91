package dev.kiln.schedule;

/**
 * {@code SA}: pads the stride of dimension {@code iterId} of the stage's buffer so that it is
 * {@code factor * k + offset} elements (to avoid shared-memory bank conflicts).
 */
public record StorageAlignStep(int stageId, int iterId, int factor, int offset) implements Step {
    @Override
    public LoopState applyTo(LoopState s) {
        Stage st = StepChecks.computeStage(s, stageId);
        int rank = st.computeOp().axes().size();
        if (iterId < 0 || iterId >= rank - 1) {
            throw new ScheduleException("storage_align of dimension " + iterId + ": stage '" + st.name() + "' has "
                    + rank + " dimensions and only the strides of dimensions 0.." + (rank - 2) + " can be padded");
        }
        if (factor <= 0 || offset < 0 || offset >= factor) {
            throw new ScheduleException("storage_align needs factor > 0 and 0 <= offset < factor, got factor " + factor
                    + ", offset " + offset);
        }
        if (st.storageBlock() != null) {
            throw new ScheduleException("stage '" + st.name() + "' has a storage_block; a buffer is either padded or "
                    + "blocked, not both");
        }
        return s.withStage(stageId, st.withStorageAlign(new Stage.StorageAlign(iterId, factor, offset)));
    }

    @Override
    public String describe(LoopState s) {
        return "storage_align(" + StepChecks.stageName(s, stageId) + ", dim " + iterId + ", " + factor + ", " + offset
                + ")";
    }
}
