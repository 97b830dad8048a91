package dev.kiln.autoschedule.mutation;

import dev.kiln.autoschedule.Candidate;
import dev.kiln.autoschedule.SearchTask;
import dev.kiln.schedule.SplitStep;
import dev.kiln.schedule.Step;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;

/**
 * What Kiln's two innermost-tile mutations share ({@link MutateRegisterTile}, {@link MutateReductionTile}): from a
 * stage drawn at random (the next one when it has no other tile), a new combination of innermost tiles of its
 * group of splits, other than the parent's; each changed split gets its new tile sizes from the rule.
 */
final class InnermostTileRedraw {
    private InnermostTileRedraw() {}

    /** The tiles a group may move to, given its splits' extents and the parent's innermost tiles {@code now}. */
    interface Tiles {
        List<int[]> others(int group, List<Long> extents, int[] now, SplittableRandom rng);
    }

    /** A split's new tile sizes with innermost tile {@code inner}. */
    interface Lengths {
        List<Integer> of(SplitStep sp, int inner, SplittableRandom rng);
    }

    /**
     * The child with one group's innermost tiles redrawn; {@code groups} holds each group's split steps (indices into
     * the parent's steps). Null when no group has another tile.
     */
    static Candidate apply(
            SearchTask task,
            Candidate parent,
            List<List<Integer>> groups,
            Tiles tiles,
            Lengths lengths,
            SplittableRandom rng) {
        if (groups.isEmpty()) return null;
        List<Step> steps = parent.schedule().steps();
        int first = rng.nextInt(groups.size());
        for (int g = 0; g < groups.size(); g++) {
            int at = (first + g) % groups.size();
            List<Integer> splits = groups.get(at);
            List<Long> extents = new ArrayList<>();
            int[] now = new int[splits.size()];
            for (int k = 0; k < now.length; k++) {
                SplitStep sp = (SplitStep) steps.get(splits.get(k));
                extents.add(sp.extent());
                now[k] = sp.lengths().getLast();
            }
            List<int[]> others = tiles.others(at, extents, now, rng);
            if (others.isEmpty()) continue;
            int[] tile = others.get(rng.nextInt(others.size()));
            List<Step> out = new ArrayList<>(steps);
            for (int k = 0; k < tile.length; k++) {
                if (tile[k] == now[k]) continue;
                SplitStep sp = (SplitStep) steps.get(splits.get(k));
                out.set(splits.get(k), sp.withLengths(lengths.of(sp, tile[k], rng)));
            }
            return Children.of(task, out);
        }
        return null;
    }

    /** The tiles other than {@code now}. */
    static List<int[]> except(List<int[]> tiles, int[] now) {
        List<int[]> out = new ArrayList<>();
        for (int[] t : tiles) if (!Arrays.equals(t, now)) out.add(t);
        return out;
    }

    /**
     * The split's middle levels (between the outermost and the innermost) with the new innermost tile {@code inner}
     * when their product divides {@code q}, the innermost tiles the split covers; else null.
     */
    static List<Integer> keepMiddle(SplitStep sp, long q, int inner) {
        List<Integer> middle = sp.lengths().subList(0, sp.lengths().size() - 1);
        if (q % product(middle) != 0) return null;
        List<Integer> out = new ArrayList<>(middle);
        out.add(inner);
        return out;
    }

    static long product(List<Integer> l) {
        long p = 1;
        for (int x : l) p *= x;
        return p;
    }
}
