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
 */
public interface CostModel {

    /** A short name for messages ("gbdt", "random"). */
    String name();

    /** Learns from measured programs of {@code task}: {@code results.get(i)} is the measurement of {@code candidates.get(i)}. */
    void update(SearchTask task, List<Candidate> candidates, List<MeasureResult> results);

    /** One score per candidate, in order. */
    double[] predict(SearchTask task, List<Candidate> candidates);

    /** Whether the scores carry no information (the search then does fewer generations, as Ansor does). */
    default boolean isRandom() { return false; }
}
