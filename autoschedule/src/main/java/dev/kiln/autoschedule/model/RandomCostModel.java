package dev.kiln.autoschedule.model;

import dev.kiln.autoschedule.Candidate;
import dev.kiln.autoschedule.SearchTask;
import dev.kiln.autoschedule.measure.MeasureResult;
import java.util.List;

/**
 * A model that learns nothing (Ansor's RandomModel): every score is uniform in [0, 1), a hash of
 * the seed and the program's key, so that scores do not depend on the order or the thread in
 * which programs are scored. For ablations: evolution guided by it shows what the search does
 * without a learned model.
 */
public final class RandomCostModel implements CostModel {
    private final long seed;

    public RandomCostModel(long seed) {
        this.seed = seed;
    }

    /** The score of a program in [0, 1): a hash of {@code seed} and {@code key}. */
    static double score(long seed, String key) {
        long h = seed * 0x9E3779B97F4A7C15L + key.hashCode();
        h ^= h >>> 33;
        h *= 0xff51afd7ed558ccdL;
        h ^= h >>> 33;
        h *= 0xc4ceb9fe1a85ec53L;
        h ^= h >>> 33;
        return (h >>> 11) * 0x1.0p-53;
    }

    @Override
    public String name() {
        return "random";
    }

    @Override
    public void update(SearchTask task, List<Candidate> candidates, List<MeasureResult> results) {
        if (candidates.size() != results.size()) {
            throw new dev.kiln.ir.KilnException(
                    "cost model update: " + candidates.size() + " programs but " + results.size() + " results");
        }
    }

    @Override
    public double[] predict(SearchTask task, List<Candidate> candidates) {
        double[] out = new double[candidates.size()];
        for (int i = 0; i < out.length; i++)
            out[i] = score(seed, candidates.get(i).key());
        return out;
    }

    @Override
    public boolean isRandom() {
        return true;
    }
}
