package dev.kiln.schedule;

import java.util.List;
import java.util.Objects;

/**
 * {@code TS}: tensorize. The loop nest from loop {@code iterId} of the stage inward (the loop and
 * every loop inside it) computes {@code intrinsic}'s pattern and runs as that intrinsic: the
 * lowering wraps the nest in a {@code tensorize$<name>} pragma, which a backend with an
 * implementation of the intrinsic replaces by its instruction(s) and which the interpreter runs as
 * the loops it wraps, the pattern itself (so every tensorized program is checked against the
 * reference). Checked when applied and again when lowered ({@link TensorizeCheck}); the loops it
 * covers can no longer be split, fused, reordered or annotated.
 */
public record TensorizeStep(int stageId, int iterId, String intrinsic) implements Step {
    /** The prefix of the pragma key that marks a tensorized loop nest in the loop IR. */
    public static final String PRAGMA_PREFIX = dev.kiln.tir.Pragma.TENSORIZE_PREFIX;

    public TensorizeStep {
        Objects.requireNonNull(intrinsic, "intrinsic");
    }

    @Override
    public LoopState applyTo(LoopState s) {
        Stage st = StepChecks.computeStage(s, stageId);
        Iter it = StepChecks.loop(st, iterId);
        TensorIntrinsic in = TensorIntrinsics.get(intrinsic);
        if (st.tensorized() != null) {
            throw new ScheduleException("stage '" + st.name() + "' is already tensorized with "
                    + st.tensorized().intrinsic());
        }
        if (st.computeAt() == ComputeAtKind.INLINED) {
            throw new ScheduleException("stage '" + st.name() + "' is inlined and has no loops to tensorize");
        }
        TensorizeCheck.check(s, stageId, it.uid(), in, false);
        return s.withStage(stageId, st.withTensorized(new Stage.Tensorized(it.uid(), intrinsic)));
    }

    @Override
    public String describe(LoopState s) {
        return "tensorize(" + StepChecks.loopName(s, stageId, iterId) + ", \"" + intrinsic + "\")";
    }

    /**
     * Whether step {@code before -> after} left everything the check of stage {@code i} reads as it was, so its
     * outcome in {@code after} is its outcome in {@code before} (which {@link LoopState#apply} checked): the stage
     * itself (the same record: its loops, annotations, attachment and tensorized loop) and, of every stage, its
     * operation, attachment and storage (what {@code hasAttachments} and the layout check's shrunk buffers read).
     * The search replays each candidate's steps; after the tensorize step most steps change other stages.
     */
    static boolean unchangedFor(LoopState before, LoopState after, int i) {
        List<Stage> a = before.stages(), b = after.stages();
        if (a.size() != b.size() || i >= a.size() || a.get(i) != b.get(i)) return false;
        for (int j = 0; j < a.size(); j++) {
            Stage x = a.get(j), y = b.get(j);
            if (x == y) continue;
            if (x.op() != y.op()
                    || x.computeAt() != y.computeAt()
                    || x.attachStage() != y.attachStage()
                    || x.attachIter() != y.attachIter()
                    || !Objects.equals(x.storageAlign(), y.storageAlign())
                    || !Objects.equals(x.storageBlock(), y.storageBlock())) return false;
        }
        return true;
    }

    /** Re-checks a tensorized stage after a later step (or before lowering, with {@code concrete}). */
    static void recheck(LoopState s, int stageId, boolean concrete) {
        Stage st = s.stage(stageId);
        if (st.tensorized() == null || st.computeAt() == ComputeAtKind.INLINED && !concrete) return;
        if (st.computeAt() == ComputeAtKind.INLINED) {
            throw new ScheduleException("stage '" + st.name() + "' is tensorized but was inlined");
        }
        TensorizeCheck.check(
                s,
                stageId,
                st.tensorized().iterUid(),
                TensorIntrinsics.get(st.tensorized().intrinsic()),
                concrete);
    }
}
