package dev.kiln.autoschedule.sketch;

import dev.kiln.schedule.LoopState;
import dev.kiln.schedule.SplitStep;
import dev.kiln.schedule.Step;
import java.util.List;
import java.util.Objects;

/**
 * A sketch: the loop structure of a family of programs, as a step list in which some split
 * lengths are undecided (null); random annotation fills them and adds the annotations.
 * {@code state} is the loop state the rules built. It can differ from the step list in one way:
 * the split before each rfactor step has length 1 in the state (Kiln's rfactor, like TVM's,
 * needs decided sizes), while the step list leaves it undecided, as Ansor's post-pass does, so
 * that its factor is sampled like any tile size.
 */
public record Sketch(List<Step> steps, LoopState state) {
    public Sketch {
        steps = java.util.Collections.unmodifiableList(new java.util.ArrayList<>(steps));
        Objects.requireNonNull(state, "state");
        if (steps.size() != state.steps().size()) {
            throw new IllegalArgumentException("a sketch's steps must match its state's history step for step");
        }
    }

    /** The number of split steps with undecided lengths (tile sizes to sample). */
    public int undecidedSplits() {
        int n = 0;
        for (Step s : steps) if (s instanceof SplitStep sp && !sp.isConcrete()) n++;
        return n;
    }

    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder(state.toString());
        sb.append("steps:\n");
        for (int i = 0; i < steps.size(); i++)
            sb.append("  ").append(i).append(": ").append(steps.get(i)).append('\n');
        return sb.toString();
    }
}
