package dev.kiln.autoschedule.annotate;

import dev.kiln.autoschedule.sketch.Sketch;
import dev.kiln.schedule.SplitStep;
import dev.kiln.schedule.Step;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.function.IntPredicate;

/**
 * What Kiln's two innermost-tile draws share ({@link RegisterTileSizes}, {@link ReductionTileSizes}): which splits of
 * a step history they may set (a sketch's undecided splits, or a program's decided inner-to-outer ones for the
 * mutations), and the tile sizes of a split around a chosen innermost tile.
 */
final class InnermostTiles {
    private InnermostTiles() {}

    /** The steps of a sketch's history that are undecided splits (the initial sampling's). */
    static IntPredicate undecided(Sketch sketch) {
        List<Step> undecided = sketch.steps();
        return i -> undecided.get(i) instanceof SplitStep sp && !sp.isConcrete();
    }

    /** The steps of a program that are decided inner-to-outer splits (the mutations'). */
    static IntPredicate decided(List<Step> steps) {
        return i -> steps.get(i) instanceof SplitStep sp && sp.isConcrete() && sp.innerToOuter();
    }

    /**
     * A split's {@code levels} tile sizes ending in {@code inner}: the other levels a factorisation of {@code q} (the
     * innermost tiles the split covers) drawn uniformly, the outer level implicit; no draw for a one-level split.
     */
    static List<Integer> around(FactorizationMemo memo, long q, int levels, int inner, SplittableRandom rng) {
        List<Integer> out = new ArrayList<>();
        if (levels > 1) {
            List<List<Integer>> schemes = memo.schemes(q, levels - 1, Math.toIntExact(q));
            out.addAll(schemes.get(rng.nextInt(schemes.size())));
        }
        out.add(inner);
        return out;
    }
}
