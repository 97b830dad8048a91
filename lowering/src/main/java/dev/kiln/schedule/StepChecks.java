package dev.kiln.schedule;

/** Checks shared by the steps; each throws a ScheduleException with the reason. */
final class StepChecks {
    private StepChecks() {}

    /** The stage, which must be a compute stage. */
    static Stage computeStage(LoopState s, int id) {
        Stage st = s.stage(id);
        if (st.isPlaceholder()) {
            throw new ScheduleException(
                    "stage " + id + " '" + st.name() + "' is a placeholder (an input) and has no loops");
        }
        return st;
    }

    /** The loop at {@code iterId} of a compute stage. */
    static Iter loop(Stage st, int iterId) {
        if (iterId < 0 || iterId >= st.leaves().size()) {
            throw new ScheduleException(
                    "stage '" + st.name() + "' has " + st.leaves().size() + " loops "
                            + st.iters().stream().map(Iter::name).toList() + "; there is no loop " + iterId);
        }
        return st.iter(iterId);
    }

    static String loopName(LoopState s, int stageId, int iterId) {
        if (stageId < 0 || stageId >= s.stages().size()) return "stage " + stageId;
        Stage st = s.stages().get(stageId);
        String loop =
                iterId >= 0 && iterId < st.leaves().size() ? st.iter(iterId).name() : "#" + iterId;
        return st.name() + ", " + loop;
    }

    static String stageName(LoopState s, int stageId) {
        return stageId >= 0 && stageId < s.stages().size()
                ? s.stages().get(stageId).name()
                : "#" + stageId;
    }

    /** Moves every stage attached at (stageId, fromUid) to (stageId, toUid). */
    static LoopState moveAttachments(LoopState s, int stageId, int fromUid, int toUid) {
        LoopState out = s;
        for (int i = 0; i < s.stages().size(); i++) {
            Stage st = s.stages().get(i);
            if (st.computeAt() == ComputeAtKind.ITER && st.attachStage() == stageId && st.attachIter() == fromUid) {
                out = out.withStage(i, st.withComputeAt(ComputeAtKind.ITER, stageId, toUid));
            }
        }
        return out;
    }

    static boolean hasAttachments(LoopState s, int stageId, int uid) {
        for (Stage st : s.stages()) {
            if (st.computeAt() == ComputeAtKind.ITER && st.attachStage() == stageId && st.attachIter() == uid)
                return true;
        }
        return false;
    }

    static long ceilDiv(long a, long b) {
        return (a + b - 1) / b;
    }
}
