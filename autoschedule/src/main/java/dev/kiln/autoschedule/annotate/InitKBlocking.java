package dev.kiln.autoschedule.annotate;

import dev.kiln.autoschedule.InferBound;
import dev.kiln.autoschedule.SearchTask;
import dev.kiln.ir.IterVar;
import dev.kiln.ir.KilnException;
import dev.kiln.schedule.LoopState;
import dev.kiln.schedule.Stage;
import java.util.SplittableRandom;

/**
 * Kiln's K-blocking annotation (issue 13, {@link KBlocking}): with probability {@code probability}
 * per multi-level-tiled stage where it changes the program ({@code largeProbability} where the reduction
 * is large and its block is of a BLAS size, {@link #large}), moves the stage's level-0 reduction loops
 * in front of its level-1 spatial loops (one {@code ReorderStep} appended to the history, then the
 * compute_at steps that move a packed copy of A to its row block, {@link KBlocking#placeRowCopies}). It runs
 * right after tile filling, before the compute-location, parallel, unroll and vectorize rules, so
 * those see the final loop order; a stage computed at its consumer's level-1 tile (where the level-1
 * loops run once) is left alone. CPU only.
 */
public record InitKBlocking(double probability, double largeProbability) implements InitRule {
    public static final String NAME = "InitKBlocking";

    /** Half of the eligible stages are K-blocked, as half of the reduction stages get a register tile first. */
    public static final double DEFAULT_PROBABILITY = 0.5;

    /**
     * Stages with a large reduction blocked 128-384 deep ({@link #large}) are K-blocked nine times in ten: in
     * GemmStudy's quiet same-process A/B (GEMM 1024, KC 128 and 256, 2026-12-02) K-blocking won all 12 pairs,
     * 1.25-1.50x with the level-1 cache write and B packed, 1.08-1.18x without a cache write.
     */
    public static final double DEFAULT_LARGE_PROBABILITY = 0.9;

    public InitKBlocking {
        if (!(probability >= 0 && probability <= 1))
            throw new KilnException("InitKBlocking probability must be in [0, 1], not " + probability);
        if (!(largeProbability >= 0 && largeProbability <= 1))
            throw new KilnException("InitKBlocking largeProbability must be in [0, 1], not " + largeProbability);
    }

    /** The same probability for every stage. */
    public InitKBlocking(double probability) {
        this(probability, probability);
    }

    public InitKBlocking() {
        this(DEFAULT_PROBABILITY, DEFAULT_LARGE_PROBABILITY);
    }

    /**
     * Whether the stage's whole reduction is at least {@link ReductionTileSizes#LARGE_REDUCTION} and the block one
     * level-0 reduction step covers (the product of the inner reduction loops) at least
     * {@link ReductionTileSizes#KC_MIN}: the packed blocks then are big enough to be worth keeping in cache across
     * the level-1 tiles, and the output tile is re-read at most {@code K / KC_MIN} times.
     */
    public static boolean large(LoopState inferred, KBlocking.Shape sh) {
        Stage st = inferred.stage(sh.stageId());
        long total = 1;
        for (IterVar k : st.computeOp().reduceAxes()) total *= k.extent();
        long outer = 1;
        for (int i = sh.r(); i < sh.r() + sh.nR(); i++) {
            Long e = st.iter(i).extent();
            if (e == null || e <= 0) return false;
            outer *= e;
        }
        return total >= ReductionTileSizes.LARGE_REDUCTION && total / outer >= ReductionTileSizes.KC_MIN;
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public LoopState apply(SearchTask task, LoopState state, SplittableRandom rng) {
        if (task.target().kind().isGpu() || (probability == 0 && largeProbability == 0)) return state;
        LoopState inferred;
        try {
            inferred = InferBound.apply(state);
        } catch (KilnException e) {
            throw new InvalidSample(NAME, e.getMessage());
        }
        LoopState s = state;
        for (KBlocking.Shape sh : KBlocking.toggleable(inferred)) {
            if (sh.blocked() || rng.nextDouble() >= (large(inferred, sh) ? largeProbability : probability)) continue;
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
