package dev.kiln.autoschedule.evolution;

import dev.kiln.autoschedule.Candidate;
import dev.kiln.autoschedule.SearchTask;
import dev.kiln.autoschedule.annotate.InitUnroll;
import dev.kiln.schedule.PragmaStep;
import dev.kiln.schedule.Step;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/**
 * Ansor's MutateAutoUnroll: one {@code auto_unroll_max_step} pragma, picked at random, gets
 * another value from the target's choices ({@link InitUnroll#CPU_STEPS} or
 * {@link InitUnroll#GPU_STEPS}). Ansor may redraw the same value; here the new value always differs.
 */
public record MutateAutoUnroll() implements MutationRule {
    @Override
    public String name() { return "MutateAutoUnroll"; }

    @Override
    public Candidate apply(SearchTask task, Candidate parent, SplittableRandom rng) {
        List<Step> steps = parent.schedule().steps();
        List<Integer> pragmas = new ArrayList<>();
        String prefix = PragmaStep.AUTO_UNROLL + "$";
        for (int i = 0; i < steps.size(); i++) {
            if (steps.get(i) instanceof PragmaStep p && p.pragma().startsWith(prefix)) pragmas.add(i);
        }
        if (pragmas.isEmpty()) return null;
        int at = pragmas.get(rng.nextInt(pragmas.size()));
        PragmaStep p = (PragmaStep) steps.get(at);
        List<Integer> choices = new ArrayList<>(task.isGpu() ? InitUnroll.GPU_STEPS : InitUnroll.CPU_STEPS);
        choices.remove(Integer.valueOf(p.pragma().substring(prefix.length())));
        if (choices.isEmpty()) return null;
        List<Step> out = new ArrayList<>(steps);
        out.set(at, new PragmaStep(p.stageId(), p.iterId(), prefix + choices.get(rng.nextInt(choices.size()))));
        return Children.of(task, out);
    }
}
