package dev.kiln.autoschedule.annotate;

import dev.kiln.autoschedule.SearchTask;
import dev.kiln.schedule.LoopState;
import java.util.SplittableRandom;

/**
 * A random-annotation rule (Ansor's PopulationGenerationRule) for concrete states: it adds
 * steps to the state (compute locations, parallel, unroll, vectorize), drawing its choices from
 * {@code rng}, or throws {@link InvalidSample}. Tile sizes are filled before any rule runs
 * ({@link InitFillTileSize}).
 */
public interface InitRule {
    String name();

    LoopState apply(SearchTask task, LoopState state, SplittableRandom rng);
}
