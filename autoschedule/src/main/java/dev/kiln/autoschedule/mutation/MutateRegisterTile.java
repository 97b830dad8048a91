package dev.kiln.autoschedule.mutation;

import dev.kiln.autoschedule.Candidate;
import dev.kiln.autoschedule.SearchTask;
import dev.kiln.autoschedule.annotate.FactorizationMemo;
import dev.kiln.autoschedule.annotate.InitFillTileSize;
import dev.kiln.autoschedule.annotate.RegisterTileSizes;
import dev.kiln.ir.KilnException;
import dev.kiln.schedule.SplitStep;
import java.util.ArrayList;
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
 * <p>With probability {@code tailProbability} the new tile is one with a tail
 * ({@link RegisterTileSizes#tailCandidates}), as in the initial sampling. The cache tile around
 * the register tile is kept: a split with new innermost tile {@code t} covers
 * {@code q = ceil(extent / t)} innermost tiles; it keeps its middle levels (those between the
 * outermost and the innermost) when their product divides {@code q}, the outermost level taking
 * the difference. Otherwise it takes, among the factorisations of {@code q}, one whose product is
 * nearest (in ratio) to the parent's middle product, drawn uniformly among the nearest. A stage is drawn at
 * random; one with no other fitting tile is skipped for the next. Only for CPU tasks: GPU tasks
 * have no register tile of this shape, and the rule returns null there.
 */
public record MutateRegisterTile(FactorizationMemo memo, double tailProbability) implements MutationRule {
    public MutateRegisterTile {
        if (!(tailProbability >= 0 && tailProbability <= 1)) {
            throw new KilnException("MutateRegisterTile: tailProbability must be in [0, 1], not " + tailProbability);
        }
    }

    /** The rule with its own factorisation memo, drawing tiles with a tail as the initial sampling does. */
    public MutateRegisterTile() {
        this(new FactorizationMemo(), InitFillTileSize.DEFAULT_TAIL_PROBABILITY);
    }

    @Override
    public String name() {
        return "MutateRegisterTile";
    }

    @Override
    public Candidate apply(SearchTask task, Candidate parent, SplittableRandom rng) {
        if (task.target().kind().isGpu()) return null;
        List<RegisterTileSizes.Group> groups =
                RegisterTileSizes.groups(task.dag(), parent.schedule().steps());
        InnermostTileRedraw.Tiles tiles = (g, extents, now, r) -> {
            int bytes = groups.get(g).registerBytes(task.target());
            List<int[]> exact = InnermostTileRedraw.except(
                    RegisterTileSizes.candidates(task.hardware(), bytes, extents, memo), now);
            List<int[]> tails = InnermostTileRedraw.except(
                    RegisterTileSizes.tailCandidates(task.hardware(), bytes, extents, memo), now);
            return RegisterTileSizes.choose(exact, tails, tailProbability, r);
        };
        List<List<Integer>> splits =
                groups.stream().map(RegisterTileSizes.Group::splitSteps).toList();
        return InnermostTileRedraw.apply(task, parent, splits, tiles, this::lengths, rng);
    }

    /** The split's new tile sizes with innermost tile {@code inner} (which may leave a tail). */
    public List<Integer> lengths(SplitStep sp, int inner, SplittableRandom rng) {
        long q = (sp.extent() + inner - 1) / inner;
        List<Integer> kept = InnermostTileRedraw.keepMiddle(sp, q, inner);
        if (kept != null) return kept;
        List<Integer> middle = sp.lengths().subList(0, sp.lengths().size() - 1);
        long mid = InnermostTileRedraw.product(middle);
        double best = Double.POSITIVE_INFINITY;
        List<List<Integer>> nearest = new ArrayList<>();
        for (List<Integer> l : memo.schemes(q, middle.size(), Math.toIntExact(q))) {
            double d = Math.abs(Math.log((double) InnermostTileRedraw.product(l) / mid));
            if (d < best - 1e-12) {
                best = d;
                nearest.clear();
            }
            if (d <= best + 1e-12) nearest.add(l);
        }
        List<Integer> out = new ArrayList<>(nearest.get(rng.nextInt(nearest.size())));
        out.add(inner);
        return out;
    }
}
