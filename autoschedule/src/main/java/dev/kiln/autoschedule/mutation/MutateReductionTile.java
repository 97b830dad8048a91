package dev.kiln.autoschedule.mutation;

import dev.kiln.autoschedule.Candidate;
import dev.kiln.autoschedule.SearchTask;
import dev.kiln.autoschedule.annotate.FactorizationMemo;
import dev.kiln.autoschedule.annotate.ReductionTileSizes;
import dev.kiln.schedule.SplitStep;
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
        List<ReductionTileSizes.Group> groups =
                ReductionTileSizes.groups(task.dag(), parent.schedule().steps());
        InnermostTileRedraw.Tiles tiles = (g, extents, now, r) -> InnermostTileRedraw.except(
                ReductionTileSizes.candidates(groups.get(g).extents(), memo), now);
        List<List<Integer>> splits =
                groups.stream().map(ReductionTileSizes.Group::splitSteps).toList();
        return InnermostTileRedraw.apply(task, parent, splits, tiles, this::lengths, rng);
    }

    /** The split's tile sizes with innermost tile {@code inner}, its middle levels kept when they still divide. */
    private List<Integer> lengths(SplitStep sp, int inner, SplittableRandom rng) {
        List<Integer> kept = InnermostTileRedraw.keepMiddle(sp, sp.extent() / inner, inner);
        if (kept != null) return kept;
        return ReductionTileSizes.withInnermost(memo, sp.extent(), sp.lengths().size(), inner, rng);
    }
}
