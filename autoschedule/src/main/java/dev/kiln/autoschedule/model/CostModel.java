package dev.kiln.autoschedule.model;

import dev.kiln.autoschedule.Candidate;
import dev.kiln.autoschedule.SearchTask;
import dev.kiln.autoschedule.measure.MeasureResult;
import java.util.List;

/**
 * Predicts how fast programs of a task are, learning from the programs measured so far: what
 * lets the search rank thousands of candidates per round while measuring only a few. Scores are
 * relative: only their order within a task matters, higher is faster; a program that cannot be
 * lowered scores {@link Double#NEGATIVE_INFINITY}.
 *
 * <p>Implementations let several threads call {@link #predict} at once (the search scores its
 * population in chunks) and give the same score to a program whatever the order or thread.
 */
public interface CostModel {

    /** A short name for messages ("gbdt", "random"). */
    String name();

    /**
     * Learns from measured programs of {@code task}: {@code results.get(i)} is the measurement of
     * {@code candidates.get(i)}.
     */
    void update(SearchTask task, List<Candidate> candidates, List<MeasureResult> results);

    /** One score per candidate, in order. */
    double[] predict(SearchTask task, List<Candidate> candidates);

    /**
     * Whether the scores carry no information now (a random model, or a learned one still in its
     * warm-up); the search then does fewer generations, as Ansor does with its random model.
     */
    default boolean isRandom() {
        return false;
    }
}
