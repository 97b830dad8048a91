package dev.kiln.autoschedule.mutation;

import dev.kiln.autoschedule.Candidate;
import dev.kiln.autoschedule.SearchTask;
import dev.kiln.autoschedule.analysis.StagePredicates;
import dev.kiln.ir.KilnException;
import dev.kiln.schedule.AnnotationStep;
import dev.kiln.schedule.ComputeAtStep;
import dev.kiln.schedule.FuseStep;
import dev.kiln.schedule.Iter;
import dev.kiln.schedule.IterAnnotation;
import dev.kiln.schedule.IterKind;
import dev.kiln.schedule.LoopState;
import dev.kiln.schedule.PragmaStep;
import dev.kiln.schedule.Schedule;
import dev.kiln.schedule.Step;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/**
 * Ansor's MutateParallel: changes how many outer loops are fused into a parallel loop. A parallel
 * annotation, picked at random, with the fuse step that made its loop (if any), is replaced by a
 * fuse of another number of leading loops (1 up to the loops that may fuse: spatial, not
 * annotated, stopping after a loop with stages computed inside it) and the annotation. Later
 * steps of the same stage that name its loops (annotate, pragma, fuse), and compute_at steps
 * into it, have their loop numbers shifted by the change; any other later step of the stage, or
 * a stage-adding step after it, makes the mutation invalid, as in Ansor.
 */
public record MutateParallel() implements MutationRule {
    @Override
    public String name() {
        return "MutateParallel";
    }

    @Override
    public Candidate apply(SearchTask task, Candidate parent, SplittableRandom rng) {
        List<Step> steps = parent.schedule().steps();
        List<Integer> parallel = new ArrayList<>();
        for (int i = 0; i < steps.size(); i++) {
            if (steps.get(i) instanceof AnnotationStep a && a.annotation() == IterAnnotation.PARALLEL) parallel.add(i);
        }
        if (parallel.isEmpty()) return null;
        int at = parallel.get(rng.nextInt(parallel.size()));
        AnnotationStep an = (AnnotationStep) steps.get(at);
        int stage = an.stageId(), iter = an.iterId();
        boolean fused = at > 0
                && steps.get(at - 1) instanceof FuseStep fu
                && fu.stageId() == stage
                && fu.iterIds().getFirst() == iter;
        int old = fused ? ((FuseStep) steps.get(at - 1)).iterIds().size() : 1;
        int prefixEnd = fused ? at - 1 : at;
        LoopState before;
        try {
            before = new Schedule(task.dag(), steps.subList(0, prefixEnd)).replay();
        } catch (KilnException e) {
            return null;
        }
        List<Iter> iters = before.stage(stage).iters();
        int max = 0;
        for (int k = iter; k < iters.size(); k++) {
            Iter it = iters.get(k);
            if (it.kind() != IterKind.SPATIAL || it.annotation() != IterAnnotation.NONE) break;
            max++;
            if (StagePredicates.hasAttached(before, stage, it)) break;
        }
        if (max <= 1) return null;
        int fresh = 1 + rng.nextInt(max - 1);
        if (fresh >= old) fresh++;
        int shift = old - fresh;

        List<Step> out = new ArrayList<>(steps.subList(0, prefixEnd));
        if (fresh > 1) {
            List<Integer> ids = new ArrayList<>();
            for (int k = 0; k < fresh; k++) ids.add(iter + k);
            out.add(new FuseStep(stage, ids));
        }
        out.add(new AnnotationStep(stage, iter, IterAnnotation.PARALLEL));
        for (int i = at + 1; i < steps.size(); i++) {
            Step s = steps.get(i);
            if (Children.addsStage(s)) return null;
            Step moved = shifted(s, stage, iter, shift);
            if (moved == null) return null;
            out.add(moved);
        }
        return Children.of(task, out);
    }

    /** {@code s} with the loop numbers of {@code stage} after {@code iter} shifted; null if it cannot be. */
    private static Step shifted(Step s, int stage, int iter, int shift) {
        return switch (s) {
            case AnnotationStep a
            when a.stageId() == stage ->
                new AnnotationStep(stage, a.iterId() > iter ? a.iterId() + shift : a.iterId(), a.annotation());
            case PragmaStep p
            when p.stageId() == stage ->
                new PragmaStep(stage, p.iterId() > iter ? p.iterId() + shift : p.iterId(), p.pragma());
            case FuseStep f
            when f.stageId() == stage -> {
                List<Integer> ids = new ArrayList<>();
                for (int id : f.iterIds()) ids.add(id > iter ? id + shift : id);
                yield new FuseStep(stage, ids);
            }
            case ComputeAtStep c
            when c.targetStageId() == stage && c.stageId() != stage ->
                new ComputeAtStep(
                        c.stageId(), stage, c.targetIterId() > iter ? c.targetIterId() + shift : c.targetIterId());
            default -> s.stageId() == stage ? null : s;
        };
    }
}
