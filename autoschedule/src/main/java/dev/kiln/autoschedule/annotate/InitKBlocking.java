package dev.kiln.autoschedule.annotate;

import dev.kiln.autoschedule.InferBound;
import dev.kiln.autoschedule.SearchTask;
import dev.kiln.ir.KilnException;
import dev.kiln.schedule.LoopState;
import java.util.SplittableRandom;

/**
 * Kiln's K-blocking annotation (issue 13, {@link KBlocking}): with probability {@code probability}
 * per multi-level-tiled stage where it changes the program, moves the stage's level-0 reduction loops
 * in front of its level-1 spatial loops (one {@code ReorderStep} appended to the history, then the
 * compute_at steps that move a packed copy of A to its row block, {@link KBlocking#placeRowCopies}). It runs
 * right after tile filling, before the compute-location, parallel, unroll and vectorize rules, so
 * those see the final loop order; a stage computed at its consumer's level-1 tile (where the level-1
 * loops run once) is left alone. CPU only.
 */
public record InitKBlocking(double probability) implements InitRule {
    public static final String NAME = "InitKBlocking";

    /** Half of the eligible stages are K-blocked, as half of the reduction stages get a register tile first. */
    public static final double DEFAULT_PROBABILITY = 0.5;

    public InitKBlocking {
        if (!(probability >= 0 && probability <= 1))
            throw new KilnException("InitKBlocking probability must be in [0, 1], not " + probability);
    }

    public InitKBlocking() {
        this(DEFAULT_PROBABILITY);
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public LoopState apply(SearchTask task, LoopState state, SplittableRandom rng) {
        if (task.target().kind().isGpu() || probability == 0) return state;
        LoopState inferred;
        try {
            inferred = InferBound.apply(state);
        } catch (KilnException e) {
            throw new InvalidSample(NAME, e.getMessage());
        }
        LoopState s = state;
        for (KBlocking.Shape sh : KBlocking.toggleable(inferred)) {
            if (sh.blocked() || rng.nextDouble() >= probability) continue;
            try {
                s = s.apply(sh.toggle(s));
                for (var at : KBlocking.placeRowCopies(s, sh.stageId())) s = s.apply(at);
            } catch (KilnException e) {
                throw new InvalidSample(NAME, e.getMessage());
            }
        }
        return s;
    }
}
