package dev.kiln.autoschedule.evolution;

import dev.kiln.autoschedule.Candidate;
import dev.kiln.autoschedule.SearchTask;
import dev.kiln.schedule.Step;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;

/**
 * Node-based crossover (described in the Ansor paper, never shipped there): a child takes the
 * decisions of some DAG nodes (stages) from one parent and the rest from the other. Each stage
 * that has steps goes to the second parent with probability 1/2 (at least one does, and not
 * all). The child is the first parent's step list where every step of a chosen stage is
 * replaced by the second parent's step at the same position, when that step is of the same kind
 * on the same stage (so tile sizes, unroll steps, fuse granularity, annotations and compute
 * locations move together per stage, and steps that do not line up stay the first parent's).
 * Parents from different sketches are compatible only where their steps line up; the child is
 * checked by replaying it, and null is returned when it is invalid or equal to a parent.
 */
public final class Crossover {
    private Crossover() {}

    /** A child of {@code a} and {@code b}, or null. */
    public static Candidate apply(SearchTask task, Candidate a, Candidate b, SplittableRandom rng) {
        List<Step> sa = a.schedule().steps(), sb = b.schedule().steps();
        Set<Integer> stages = new HashSet<>();
        int n = Math.min(sa.size(), sb.size());
        for (int i = 0; i < n; i++) {
            Step x = sa.get(i), y = sb.get(i);
            if (x.getClass() == y.getClass() && x.stageId() == y.stageId() && !x.equals(y)) stages.add(x.stageId());
        }
        if (stages.size() < 2) return null;
        List<Integer> ordered = new ArrayList<>(stages);
        ordered.sort(null);
        Set<Integer> fromB = new HashSet<>();
        while (fromB.isEmpty() || fromB.size() == ordered.size()) {
            fromB.clear();
            for (int s : ordered) if (rng.nextBoolean()) fromB.add(s);
        }
        List<Step> out = new ArrayList<>(sa);
        for (int i = 0; i < n; i++) {
            Step x = sa.get(i), y = sb.get(i);
            if (fromB.contains(x.stageId()) && x.getClass() == y.getClass() && x.stageId() == y.stageId()) out.set(i, y);
        }
        Candidate c = Children.of(task, out);
        if (c == null || c.key().equals(a.key()) || c.key().equals(b.key())) return null;
        return c;
    }
}
