package dev.kiln.autoschedule.mutation;

import dev.kiln.autoschedule.Candidate;
import dev.kiln.autoschedule.SearchTask;
import dev.kiln.autoschedule.annotate.FactorizationMemo;
import dev.kiln.autoschedule.annotate.ReductionTileSizes;
import dev.kiln.schedule.SplitStep;
import dev.kiln.schedule.Step;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;

/**
 * Kiln's reduction-block mutation (issue 13; Ansor has none): redraws the reduction block of one
 * multi-level-tiled stage with a large reduction (the innermost tiles of its reduction splits,
 * {@link ReductionTileSizes#groups(dev.kiln.te.ComputeDAG, List)}) among the blocks of 128-384
 * ({@link ReductionTileSizes#candidates}) other than the parent's: GEMM 1024's {@code k.1} moves among
 * 128, 256 and 384 where they divide K (a conv's block among the products of its {@code rc, ry, rx} tiles).
 * {@link MutateTileSize} never grows an innermost tile past 64, so without this rule a program drawn with
 * a small block never reaches these. Each changed split keeps its middle levels where they still divide,
 * else takes a uniform factorisation of the rest. A stage is drawn at random; one with no other block is
 * skipped for the next. CPU only; null when no stage has a block to move to.
 */
public record MutateReductionTile(FactorizationMemo memo) implements MutationRule {
    public MutateReductionTile() {
        this(new FactorizationMemo());
    }

    @Override
    public String name() {
        return "MutateReductionTile";
    }

    @Override
    public Candidate apply(SearchTask task, Candidate parent, SplittableRandom rng) {
        if (task.target().kind().isGpu()) return null;
        List<Step> steps = parent.schedule().steps();
        List<ReductionTileSizes.Group> groups = ReductionTileSizes.groups(task.dag(), steps);
        if (groups.isEmpty()) return null;
        int first = rng.nextInt(groups.size());
        for (int g = 0; g < groups.size(); g++) {
            ReductionTileSizes.Group group = groups.get((first + g) % groups.size());
            int[] now = new int[group.splitSteps().size()];
            for (int k = 0; k < now.length; k++)
                now[k] = ((SplitStep) steps.get(group.splitSteps().get(k)))
                        .lengths()
                        .getLast();
            List<int[]> others = new ArrayList<>();
            for (int[] t : ReductionTileSizes.candidates(group.extents(), memo))
                if (!Arrays.equals(t, now)) others.add(t);
            if (others.isEmpty()) continue;
            int[] tile = others.get(rng.nextInt(others.size()));
            List<Step> out = new ArrayList<>(steps);
            for (int k = 0; k < tile.length; k++) {
                if (tile[k] == now[k]) continue;
                SplitStep sp = (SplitStep) steps.get(group.splitSteps().get(k));
                out.set(group.splitSteps().get(k), sp.withLengths(lengths(sp, tile[k], rng)));
            }
            return Children.of(task, out);
        }
        return null;
    }

    /** The split's tile sizes with innermost tile {@code inner}, its middle levels kept when they still divide. */
    private List<Integer> lengths(SplitStep sp, int inner, SplittableRandom rng) {
        List<Integer> middle = sp.lengths().subList(0, sp.lengths().size() - 1);
        long mid = 1;
        for (int x : middle) mid *= x;
        if ((sp.extent() / inner) % mid == 0) {
            List<Integer> out = new ArrayList<>(middle);
            out.add(inner);
            return out;
        }
        return ReductionTileSizes.withInnermost(memo, sp.extent(), sp.lengths().size(), inner, rng);
    }
}
