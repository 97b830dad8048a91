package dev.kiln.autoschedule.mutation;

import dev.kiln.autoschedule.Candidate;
import dev.kiln.autoschedule.SearchTask;
import dev.kiln.autoschedule.annotate.InitUnroll;
import dev.kiln.ir.KilnException;
import dev.kiln.schedule.PragmaStep;
import dev.kiln.schedule.Step;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/**
 * Ansor's MutateAutoUnroll: one {@code auto_unroll_max_step} pragma, picked at random, gets
 * another value from the target's choices (those of its InitUnroll: {@link InitUnroll#CPU_STEPS}
 * or {@link InitUnroll#GPU_STEPS}, see {@code TargetRules}). Ansor may redraw the same value; here
 * the new value always differs.
 */
public record MutateAutoUnroll(List<Integer> choices) implements MutationRule {
    public MutateAutoUnroll {
        choices = List.copyOf(choices);
        if (choices.isEmpty())
            throw new KilnException("MutateAutoUnroll needs at least one auto_unroll_max_step choice");
    }

    @Override
    public String name() {
        return "MutateAutoUnroll";
    }

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
        List<Integer> others = new ArrayList<>(choices);
        others.remove(Integer.valueOf(p.pragma().substring(prefix.length())));
        if (others.isEmpty()) return null;
        List<Step> out = new ArrayList<>(steps);
        out.set(at, new PragmaStep(p.stageId(), p.iterId(), prefix + others.get(rng.nextInt(others.size()))));
        return Children.of(task, out);
    }
}
