package dev.kiln.autoschedule.evolution;

import dev.kiln.autoschedule.Candidate;
import dev.kiln.autoschedule.SearchTask;
import dev.kiln.autoschedule.annotate.FactorizationMemo;
import dev.kiln.autoschedule.annotate.RegisterTileSizes;
import dev.kiln.schedule.SplitStep;
import dev.kiln.schedule.Step;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;

/**
 * Kiln's register-tile mutation (issue 13; Ansor has none): redraws the whole register tile of
 * one multi-level-tiled reduction stage at once, the innermost tile of every spatial split of the
 * stage ({@link RegisterTileSizes#groups(dev.kiln.te.ComputeDAG, List)}), among the tiles that fit
 * the vector registers ({@link RegisterTileSizes#candidates}) other than the parent's. Moving
 * from a 4x32 to a 7x32 or a 14x16 tile changes two splits together, which
 * {@link MutateTileSize} (one factor of one split per child) reaches only through a chain of
 * children that spill or starve the registers on the way, and so are selected away.
 *
 * <p>The cache tile around the register tile is kept: every split keeps its middle levels
 * (those between the outermost and the innermost) when the extent still divides by their product
 * times the new innermost tile, the outermost level taking the difference. Otherwise the split
 * takes, among the exact factorisations with the new innermost tile, one whose middle product is
 * nearest (in ratio) to the parent's, drawn uniformly among the nearest. A stage is drawn at
 * random; one with no other fitting tile is skipped for the next. Only for CPU tasks: GPU tasks
 * have no register tile of this shape, and the rule returns null there.
 */
public record MutateRegisterTile(FactorizationMemo memo) implements MutationRule {

    /** The rule with its own factorisation memo. */
    public MutateRegisterTile() {
        this(new FactorizationMemo());
    }

    @Override
    public String name() { return "MutateRegisterTile"; }

    @Override
    public Candidate apply(SearchTask task, Candidate parent, SplittableRandom rng) {
        if (task.isGpu()) return null;
        List<Step> steps = parent.schedule().steps();
        List<RegisterTileSizes.Group> groups = RegisterTileSizes.groups(task.dag(), steps);
        if (groups.isEmpty()) return null;
        int first = rng.nextInt(groups.size());
        for (int g = 0; g < groups.size(); g++) {
            RegisterTileSizes.Group group = groups.get((first + g) % groups.size());
            List<Long> extents = new ArrayList<>();
            int[] now = new int[group.splitSteps().size()];
            for (int k = 0; k < now.length; k++) {
                SplitStep sp = (SplitStep) steps.get(group.splitSteps().get(k));
                extents.add(sp.extent());
                now[k] = sp.lengths().getLast();
            }
            List<int[]> others = new ArrayList<>();
            for (int[] t : RegisterTileSizes.candidates(task.hardware(), group.elementBytes(), extents, memo)) {
                if (!Arrays.equals(t, now)) others.add(t);
            }
            if (others.isEmpty()) continue;
            int[] tile = others.get(rng.nextInt(others.size()));
            List<Step> out = new ArrayList<>(steps);
            for (int k = 0; k < tile.length; k++) {
                if (tile[k] == now[k]) continue;
                int at = group.splitSteps().get(k);
                SplitStep sp = (SplitStep) steps.get(at);
                out.set(at, sp.withLengths(lengths(sp, tile[k], task.hardware().maxInnermostSplitFactor(), rng)));
            }
            return Children.of(task, out);
        }
        return null;
    }

    /** The split's new tile sizes with innermost tile {@code inner} (a divisor of its extent). */
    List<Integer> lengths(SplitStep sp, int inner, int maxInner, SplittableRandom rng) {
        List<Integer> middle = sp.lengths().subList(0, sp.lengths().size() - 1);
        long mid = product(middle);
        if (sp.extent() % (mid * inner) == 0) {
            List<Integer> out = new ArrayList<>(middle);
            out.add(inner);
            return out;
        }
        double best = Double.POSITIVE_INFINITY;
        List<List<Integer>> nearest = new ArrayList<>();
        for (List<Integer> l : memo.schemes(sp.extent(), sp.lengths().size(), Math.max(maxInner, inner))) {
            if (l.getLast() != inner) continue;
            double d = Math.abs(Math.log((double) product(l.subList(0, l.size() - 1)) / mid));
            if (d < best - 1e-12) {
                best = d;
                nearest.clear();
            }
            if (d <= best + 1e-12) nearest.add(l);
        }
        return nearest.get(rng.nextInt(nearest.size()));
    }

    private static long product(List<Integer> l) {
        long p = 1;
        for (int x : l) p *= x;
        return p;
    }
}
