package dev.kiln.schedule;

import java.util.ArrayList;
import java.util.List;

/**
 * {@code FU}: fuses adjacent loops into one named {@code a@b@}; its extent is the product of
 * theirs. Only the last of them may have stages computed inside it; those move to the fused loop.
 */
public record FuseStep(int stageId, List<Integer> iterIds) implements Step {
    public FuseStep {
        iterIds = List.copyOf(iterIds);
    }

    @Override
    public LoopState applyTo(LoopState s) {
        Stage st = StepChecks.computeStage(s, stageId);
        if (iterIds.isEmpty()) throw new ScheduleException("fuse needs at least one loop");
        for (int k = 0; k < iterIds.size(); k++) {
            StepChecks.loop(st, iterIds.get(k));
            if (k > 0 && iterIds.get(k) != iterIds.get(k - 1) + 1) {
                throw new ScheduleException(
                        "loops " + iterIds.stream().map(i -> st.iter(i).name()).toList()
                                + " are not adjacent; reorder them first");
            }
        }
        if (iterIds.size() == 1) return s;
        List<Iter> parts = iterIds.stream().map(st::iter).toList();
        StringBuilder name = new StringBuilder();
        Long extent = 1L;
        IterKind kind = parts.get(0).kind();
        for (int k = 0; k < parts.size(); k++) {
            Iter p = parts.get(k);
            if (p.annotation() != IterAnnotation.NONE) {
                throw new ScheduleException("loop '" + p.name() + "' is annotated "
                        + p.annotation().displayName() + "; fuse before annotating");
            }
            if (k < parts.size() - 1 && StepChecks.hasAttachments(s, stageId, p.uid())) {
                throw new ScheduleException(
                        "a stage is computed at loop '" + p.name() + "', which is not the last of the fused loops");
            }
            name.append(p.name()).append('@');
            extent = extent == null || p.extent() == null ? null : extent * p.extent();
            if (p.kind() != kind) kind = IterKind.MIXED;
        }
        if (kind == IterKind.MIXED && st.computeOp().isReduction()) {
            throw new ScheduleException("fusing spatial and reduction loops "
                    + parts.stream().map(Iter::name).toList()
                    + " of a reduction is not supported: the initialisation could not be placed");
        }
        List<Iter> all = new ArrayList<>(st.all());
        int uid = all.size();
        all.add(new Iter(uid, name.toString(), extent, kind, IterAnnotation.NONE));
        List<IterRelation> rel = new ArrayList<>(st.relations());
        rel.add(new IterRelation.Fuse(parts.stream().map(Iter::uid).toList(), uid));
        List<Integer> leaves = new ArrayList<>(st.leaves());
        int first = iterIds.get(0);
        for (int k = 0; k < iterIds.size(); k++) leaves.remove(first);
        leaves.add(first, uid);
        LoopState out = s.withStage(stageId, st.with(all, leaves, rel));
        return StepChecks.moveAttachments(out, stageId, parts.getLast().uid(), uid);
    }

    @Override
    public String describe(LoopState s) {
        return "fuse(" + StepChecks.stageName(s, stageId) + ", " + iterIds + ")";
    }
}
