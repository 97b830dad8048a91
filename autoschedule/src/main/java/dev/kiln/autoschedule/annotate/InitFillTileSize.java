package dev.kiln.autoschedule.annotate;

import dev.kiln.autoschedule.SearchTask;
import dev.kiln.autoschedule.sketch.Sketch;
import dev.kiln.ir.KilnException;
import dev.kiln.schedule.LoopState;
import dev.kiln.schedule.Schedule;
import dev.kiln.schedule.SplitStep;
import dev.kiln.schedule.Step;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/**
 * The first annotation rule: every split of the sketch with undecided lengths gets a
 * factorisation of its extent drawn uniformly from all exact ones whose innermost tile is at
 * most {@link dev.kiln.autoschedule.HardwareParams#maxInnermostSplitFactor()} (so a prime
 * extent p is tiled only as 1 or p). Follow-splits follow their source when the steps are
 * replayed, which gives the concrete state.
 */
public final class InitFillTileSize {
    public static final String NAME = "InitFillTileSize";

    private final FactorizationMemo memo;

    public InitFillTileSize(FactorizationMemo memo) {
        this.memo = memo;
    }

    /** The sketch's steps with every undecided split filled. */
    public List<Step> fill(SearchTask task, Sketch sketch, SplittableRandom rng) {
        List<Step> steps = new ArrayList<>(sketch.steps());
        for (int i = 0; i < steps.size(); i++) {
            if (!(steps.get(i) instanceof SplitStep sp) || sp.isConcrete()) continue;
            if (sp.extent() == null) {
                throw new KilnException("split step " + i + " of the sketch has undecided lengths but no known extent");
            }
            List<List<Integer>> schemes = memo.schemes(sp.extent(), sp.lengths().size(),
                    task.hardware().maxInnermostSplitFactor());
            steps.set(i, sp.withLengths(schemes.get(rng.nextInt(schemes.size()))));
        }
        return steps;
    }

    /** Fills the tile sizes and replays the steps: the concrete state the other rules start from. */
    public LoopState apply(SearchTask task, Sketch sketch, SplittableRandom rng) {
        List<Step> steps = fill(task, sketch, rng);
        try {
            return new Schedule(task.dag(), steps).replay();
        } catch (KilnException e) {
            throw new InvalidSample(NAME, e.getMessage());
        }
    }
}
