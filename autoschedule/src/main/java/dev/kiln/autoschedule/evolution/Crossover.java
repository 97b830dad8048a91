package dev.kiln.autoschedule.evolution;

import dev.kiln.autoschedule.Candidate;
import dev.kiln.autoschedule.SearchTask;
import dev.kiln.autoschedule.mutation.Children;
import dev.kiln.schedule.PragmaStep;
import dev.kiln.schedule.SplitStep;
import dev.kiln.schedule.Step;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.TreeSet;

/**
 * Node-based crossover (described in the Ansor paper, never shipped there): a child takes the
 * decisions of some DAG nodes (stages) from one parent and the rest from the other.
 *
 * <p>The parents' step lists are lined up position by position; a position is shared when both
 * steps are of the same kind on the same stage. Parents of one sketch line up everywhere (the
 * search pairs them so: {@link #signature}); those of different sketches only where their steps
 * agree. Then:
 * <ul>
 *   <li>when two or more stages differ, each differing stage goes to the second parent with
 *       probability 1/2 (at least one does, and not all), and every shared step of such a stage is
 *       taken from it, so tile sizes, unroll steps, fuse granularity, annotations and compute
 *       locations move together per stage, as the paper describes;</li>
 *   <li>when a single stage differs (a lone GEMM or convolution, the common case), the genes are
 *       finer: that stage's differing tile-size splits and unroll pragmas, each taken from the
 *       second parent with probability 1/2 (at least one, not all), while the structural steps
 *       (fuse, reorder, annotations, compute locations) stay the first parent's. So the tiling of
 *       one loop can meet the tiling of another and the unroll depth of a third program.</li>
 * </ul>
 * The child is checked by replaying it ({@link Children}); null is returned when there is nothing
 * to cross, or the child is invalid or equal to a parent.
 */
final class Crossover {
    private Crossover() {}

    /** A child of {@code a} and {@code b}, or null. */
    public static Candidate apply(SearchTask task, Candidate a, Candidate b, SplittableRandom rng) {
        List<Step> sa = a.schedule().steps(), sb = b.schedule().steps();
        int n = Math.min(sa.size(), sb.size());
        TreeSet<Integer> stages = new TreeSet<>();
        List<Integer> genes = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            Step x = sa.get(i), y = sb.get(i);
            if (!lineUp(x, y) || x.equals(y)) continue;
            stages.add(x.stageId());
            if (sameDecision(x, y)) genes.add(i);
        }
        List<Step> out = new ArrayList<>(sa);
        if (stages.size() >= 2) {
            List<Integer> ordered = new ArrayList<>(stages);
            boolean[] fromB = choose(ordered.size(), rng);
            for (int i = 0; i < n; i++) {
                Step x = sa.get(i), y = sb.get(i);
                if (lineUp(x, y) && stages.contains(x.stageId()) && fromB[ordered.indexOf(x.stageId())]) out.set(i, y);
            }
        } else {
            if (genes.size() < 2) return null;
            boolean[] fromB = choose(genes.size(), rng);
            for (int g = 0; g < genes.size(); g++) if (fromB[g]) out.set(genes.get(g), sb.get(genes.get(g)));
        }
        Candidate c = Children.of(task, out);
        if (c == null || c.key().equals(a.key()) || c.key().equals(b.key())) return null;
        return c;
    }

    /**
     * The shape of a program's step list: each step's kind and stage, without its values. Programs
     * of one sketch, varied only in their tile sizes and annotations, share it, and so line up
     * everywhere for crossover.
     */
    public static String signature(Candidate c) {
        StringBuilder s = new StringBuilder();
        for (Step st : c.schedule().steps())
            s.append(st.getClass().getSimpleName()).append(st.stageId()).append(';');
        return s.toString();
    }

    private static boolean lineUp(Step x, Step y) {
        return x.getClass() == y.getClass() && x.stageId() == y.stageId();
    }

    /**
     * Whether two lined-up steps decide the same thing with other values: one loop's tile sizes, or its unroll pragma.
     */
    private static boolean sameDecision(Step x, Step y) {
        if (x instanceof SplitStep p && y instanceof SplitStep q) {
            return p.iterId() == q.iterId()
                    && p.lengths().size() == q.lengths().size()
                    && java.util.Objects.equals(p.extent(), q.extent());
        }
        return x instanceof PragmaStep p && y instanceof PragmaStep q && p.iterId() == q.iterId();
    }

    /** A random subset of {@code n >= 2} genes to take from the second parent: not empty, not all. */
    private static boolean[] choose(int n, SplittableRandom rng) {
        boolean[] pick = new boolean[n];
        int k;
        do {
            k = 0;
            for (int i = 0; i < n; i++) if (pick[i] = rng.nextBoolean()) k++;
        } while (k == 0 || k == n);
        return pick;
    }
}
