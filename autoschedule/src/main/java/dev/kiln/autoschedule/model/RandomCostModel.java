package dev.kiln.autoschedule.model;

import dev.kiln.autoschedule.Candidate;
import dev.kiln.autoschedule.SearchTask;
import dev.kiln.autoschedule.measure.MeasureResult;
import java.util.List;
import java.util.SplittableRandom;

/**
 * A model that learns nothing: every score is uniform in [0, 1) from a seeded generator (Ansor's
 * RandomModel). For ablations: evolution guided by it measures what the search does without a
 * learned model.
 */
public final class RandomCostModel implements CostModel {
    private final SplittableRandom rng;

    public RandomCostModel(long seed) {
        this.rng = new SplittableRandom(seed);
    }

    @Override
    public String name() { return "random"; }

    @Override
    public void update(SearchTask task, List<Candidate> candidates, List<MeasureResult> results) {
        if (candidates.size() != results.size()) {
            throw new dev.kiln.ir.KilnException("cost model update: " + candidates.size() + " programs but "
                    + results.size() + " results");
        }
    }

    @Override
    public synchronized double[] predict(SearchTask task, List<Candidate> candidates) {
        double[] out = new double[candidates.size()];
        for (int i = 0; i < out.length; i++) out[i] = rng.nextDouble();
        return out;
    }

    @Override
    public boolean isRandom() { return true; }
}
