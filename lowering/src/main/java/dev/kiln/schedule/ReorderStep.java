package dev.kiln.schedule;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;

/**
 * {@code RE}: puts the loops in a new order; {@code order} lists every current loop index once,
 * outermost first. Stages computed inside a loop stay with that loop.
 */
public record ReorderStep(int stageId, List<Integer> order) implements Step {
    public ReorderStep {
        order = List.copyOf(order);
    }

    @Override
    public LoopState applyTo(LoopState s) {
        Stage st = StepChecks.computeStage(s, stageId);
        int n = st.leaves().size();
        if (order.size() != n
                || new HashSet<>(order).size() != n
                || order.stream().anyMatch(i -> i < 0 || i >= n)) {
            throw new ScheduleException("the order " + order + " is not a permutation of the " + n + " loops "
                    + st.iters().stream().map(Iter::name).toList());
        }
        List<Integer> leaves = new ArrayList<>();
        for (int i : order) leaves.add(st.leaves().get(i));
        return s.withStage(stageId, st.withLeaves(leaves));
    }

    @Override
    public String describe(LoopState s) {
        return "reorder(" + StepChecks.stageName(s, stageId) + ", " + order + ")";
    }
}
