package dev.kiln.autoschedule.model;

import dev.kiln.ir.KilnException;

/**
 * The settings of the gradient-boosted trees ({@link Gbdt}). Ansor's XGBoost settings are depth
 * 10, learning rate 0.2, gamma 0.001, L2 regularisation 1 and up to 10,000 rounds with early
 * stopping, on the squared error; Kiln's defaults (128 rounds of depth-6 trees at learning rate
 * 0.1, on a pairwise ranking loss) ranked held-out measured programs better and train as fast
 * (docs/PERFORMANCE.md, "Cost model").
 *
 * @param rounds          boosting rounds (trees)
 * @param maxDepth        the deepest a tree grows (a root alone has depth 0)
 * @param learningRate    shrinkage of every tree's output (XGBoost's eta)
 * @param lambda          L2 regularisation of leaf values
 * @param gamma           the least loss reduction a split must bring
 * @param minChildWeight  the least hessian sum a child may have
 * @param maxBins         histogram bins per feature (at most 256)
 * @param threads         threads that build histograms (1: the caller's thread only)
 * @param objective       the loss ({@link Objective})
 * @param pairsPerProgram random partners per program and round under {@link Objective#PAIRWISE_RANK}
 */
public record GbdtParams(
        int rounds,
        int maxDepth,
        double learningRate,
        double lambda,
        double gamma,
        double minChildWeight,
        int maxBins,
        int threads,
        Objective objective,
        int pairsPerProgram) {
    public GbdtParams {
        if (rounds < 1) throw new KilnException("gbdt: rounds must be at least 1, got " + rounds);
        if (maxDepth < 1 || maxDepth > 20) throw new KilnException("gbdt: maxDepth must be in 1..20, got " + maxDepth);
        if (!(learningRate > 0)) throw new KilnException("gbdt: learningRate must be positive, got " + learningRate);
        if (!(lambda >= 0) || !(gamma >= 0) || !(minChildWeight >= 0)) {
            throw new KilnException("gbdt: lambda, gamma and minChildWeight must not be negative");
        }
        if (maxBins < 2 || maxBins > 256) throw new KilnException("gbdt: maxBins must be in 2..256, got " + maxBins);
        if (threads < 1) throw new KilnException("gbdt: threads must be at least 1, got " + threads);
        java.util.Objects.requireNonNull(objective, "objective");
        if (pairsPerProgram < 1)
            throw new KilnException("gbdt: pairsPerProgram must be at least 1, got " + pairsPerProgram);
    }

    /**
     * The defaults: 128 rounds of depth-6 trees, eta 0.1, lambda 1, gamma 0.001, 64 bins, one
     * thread, the pairwise ranking loss with 16 partners per program and round.
     */
    public static GbdtParams defaults() {
        return new GbdtParams(128, 6, 0.1, 1.0, 0.001, 0.0, 64, 1, Objective.PAIRWISE_RANK, 16);
    }

    /**
     * Ansor's settings with a fixed number of rounds: 100 rounds of depth-10 trees, eta 0.2, squared error (for
     * comparisons).
     */
    public static GbdtParams ansor() {
        return new GbdtParams(100, 10, 0.2, 1.0, 0.001, 0.0, 64, 1, Objective.SQUARED_ERROR, 16);
    }

    public GbdtParams withRounds(int n) {
        return new GbdtParams(
                n, maxDepth, learningRate, lambda, gamma, minChildWeight, maxBins, threads, objective, pairsPerProgram);
    }

    public GbdtParams withMaxDepth(int d) {
        return new GbdtParams(
                rounds, d, learningRate, lambda, gamma, minChildWeight, maxBins, threads, objective, pairsPerProgram);
    }

    public GbdtParams withThreads(int n) {
        return new GbdtParams(
                rounds, maxDepth, learningRate, lambda, gamma, minChildWeight, maxBins, n, objective, pairsPerProgram);
    }

    public GbdtParams withMaxBins(int n) {
        return new GbdtParams(
                rounds, maxDepth, learningRate, lambda, gamma, minChildWeight, n, threads, objective, pairsPerProgram);
    }

    public GbdtParams withObjective(Objective o) {
        return new GbdtParams(
                rounds, maxDepth, learningRate, lambda, gamma, minChildWeight, maxBins, threads, o, pairsPerProgram);
    }

    public GbdtParams withPairsPerProgram(int n) {
        return new GbdtParams(
                rounds, maxDepth, learningRate, lambda, gamma, minChildWeight, maxBins, threads, objective, n);
    }

    public GbdtParams withLearningRate(double eta) {
        return new GbdtParams(
                rounds, maxDepth, eta, lambda, gamma, minChildWeight, maxBins, threads, objective, pairsPerProgram);
    }
}
