package dev.kiln.autoschedule.mutation;

import dev.kiln.autoschedule.Candidate;
import dev.kiln.autoschedule.SearchTask;
import dev.kiln.autoschedule.annotate.KBlocking;
import dev.kiln.schedule.ComputeAtStep;
import dev.kiln.schedule.Iter;
import dev.kiln.schedule.ReorderStep;
import dev.kiln.schedule.Step;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/**
 * Kiln's K-blocking mutation (issue 13, {@link KBlocking}): one multi-level-tiled stage, picked at
 * random among those where the choice changes the program, is K-blocked if it was not and unblocked if
 * it was. Blocking appends the reorder to the history; unblocking removes the reorder that blocked it
 * (with the compute_at steps right after it that moved A's packed copy) when the child is then exactly
 * the parent with those loops moved back (same loops, extents and annotations), else appends the
 * inverse reorder. Either way A's packed copy is then put where the new order wants it
 * ({@link KBlocking#placeRowCopies}). CPU only; null when no stage can be toggled.
 */
public record MutateKBlocking() implements MutationRule {
    @Override
    public String name() {
        return "MutateKBlocking";
    }

    @Override
    public Candidate apply(SearchTask task, Candidate parent, SplittableRandom rng) {
        if (task.target().kind().isGpu()) return null;
        List<KBlocking.Shape> shapes = KBlocking.toggleable(parent.state());
        if (shapes.isEmpty()) return null;
        KBlocking.Shape sh = shapes.get(rng.nextInt(shapes.size()));
        List<Step> steps = parent.schedule().steps();
        ReorderStep toggle = sh.toggle(parent.state());
        if (sh.blocked()) {
            Candidate removed = withoutBlockingStep(task, parent, sh, toggle);
            if (removed != null) return removed;
        }
        List<Step> out = new ArrayList<>(steps);
        out.add(toggle);
        return placed(task, Children.of(task, out), sh.stageId());
    }

    /** The child with its packed copies of A moved where its order wants them ({@link KBlocking#placeRowCopies}). */
    private static Candidate placed(SearchTask task, Candidate c, int stageId) {
        if (c == null) return null;
        List<ComputeAtStep> moves = KBlocking.placeRowCopies(c.state(), stageId);
        if (moves.isEmpty()) return c;
        List<Step> out = new ArrayList<>(c.schedule().steps());
        out.addAll(moves);
        return Children.of(task, out);
    }

    /** The parent without its last reorder of the stage, if that gives the unblocked program; else null. */
    private static Candidate withoutBlockingStep(
            SearchTask task, Candidate parent, KBlocking.Shape sh, ReorderStep toggle) {
        List<Step> steps = parent.schedule().steps();
        int last = -1;
        for (int i = steps.size() - 1; i >= 0 && last < 0; i--) {
            if (steps.get(i) instanceof ReorderStep r && r.stageId() == sh.stageId()) last = i;
        }
        if (last < 0) return null;
        List<Step> out = new ArrayList<>(steps.subList(0, last));
        int next = last + 1;
        // the compute_at steps that moved A's copy with the blocking go with it
        while (next < steps.size() && steps.get(next) instanceof ComputeAtStep at && at.targetStageId() == sh.stageId())
            next++;
        out.addAll(steps.subList(next, steps.size()));
        Candidate c = placed(task, Children.of(task, out), sh.stageId());
        if (c == null || sh.stageId() >= c.state().stages().size()) return null;
        List<Iter> was = parent.state().stage(sh.stageId()).iters();
        List<Iter> now = c.state().stage(sh.stageId()).iters();
        if (now.size() != was.size()) return null;
        for (int k = 0; k < now.size(); k++) {
            Iter want = was.get(toggle.order().get(k)), got = now.get(k);
            if (want.uid() != got.uid()
                    || !want.name().equals(got.name())
                    || want.annotation() != got.annotation()
                    || !java.util.Objects.equals(want.extent(), got.extent())) return null;
        }
        return KBlocking.isBlocked(c.state(), sh.stageId()) ? null : c;
    }
}
