package dev.kiln.autoschedule.evolution;

import dev.kiln.ir.KilnException;

/**
 * The knobs of evolutionary search. Ansor's values are population 2048, 4 generations, mutation
 * probability 0.85, eps-greedy 0.05, 20% of the population seeded with the best measured programs,
 * and mutation weights tile size 0.90, auto-unroll 0.04, compute location 0.05, parallel 0.01 on
 * a CPU (0.90 and 0.10 for tile size and auto-unroll on a GPU). Kiln's defaults keep all of those
 * but the population (512, so that a round on two cores takes seconds), spend 10% of the draws on
 * crossover (Ansor copies the parent unchanged with the 15% left after mutation), and give 0.10 of
 * the tile-size weight to Kiln's {@link MutateRegisterTile} on a CPU (tile size 0.80, register tile
 * 0.10; {@link #ansorCpu()} restores Ansor's weights).
 *
 * @param population              programs per generation
 * @param generations             rounds of selection and variation
 * @param randomModelGenerations  generations when the model's scores are random (Ansor: 2)
 * @param initSamples             fresh random programs drawn per search round
 * @param mutationProbability     share of children made by mutation
 * @param crossoverProbability    share made by crossover (the rest copy their parent)
 * @param epsGreedy               share of each measured batch drawn from the random programs
 * @param measuredSeedRatio       at most this share of the population is the best measured programs
 * @param tileSizeWeight          weight of {@link MutateTileSize}
 * @param autoUnrollWeight        weight of {@link MutateAutoUnroll}
 * @param computeLocationWeight   weight of {@link MutateComputeLocation}
 * @param parallelWeight          weight of {@link MutateParallel}
 * @param registerTileWeight      weight of {@link MutateRegisterTile} (Kiln's; 0 in Ansor's space and on a GPU)
 * @param threads                 threads that sample, mutate and score (1: the caller's thread only)
 */
public record EvolutionOptions(int population, int generations, int randomModelGenerations, int initSamples,
                               double mutationProbability, double crossoverProbability, double epsGreedy,
                               double measuredSeedRatio, double tileSizeWeight, double autoUnrollWeight,
                               double computeLocationWeight, double parallelWeight, double registerTileWeight,
                               int threads) {
    public EvolutionOptions {
        if (population < 2) throw new KilnException("evolution: population must be at least 2, got " + population);
        if (generations < 0 || randomModelGenerations < 0) {
            throw new KilnException("evolution: generations must not be negative, got " + generations + ", " + randomModelGenerations);
        }
        if (initSamples < 1) throw new KilnException("evolution: initSamples must be at least 1, got " + initSamples);
        probability("mutationProbability", mutationProbability);
        probability("crossoverProbability", crossoverProbability);
        if (mutationProbability + crossoverProbability > 1 + 1e-12) {
            throw new KilnException("evolution: mutation and crossover probabilities add up to more than 1: "
                    + mutationProbability + " + " + crossoverProbability);
        }
        probability("epsGreedy", epsGreedy);
        probability("measuredSeedRatio", measuredSeedRatio);
        for (double w : new double[] {tileSizeWeight, autoUnrollWeight, computeLocationWeight, parallelWeight,
                registerTileWeight}) {
            if (!(w >= 0)) throw new KilnException("evolution: mutation weights must not be negative, got " + w);
        }
        if (tileSizeWeight + autoUnrollWeight + computeLocationWeight + parallelWeight + registerTileWeight <= 0) {
            throw new KilnException("evolution: at least one mutation weight must be positive");
        }
        if (threads < 1) throw new KilnException("evolution: threads must be at least 1, got " + threads);
    }

    private static void probability(String what, double p) {
        if (!(p >= 0 && p <= 1)) throw new KilnException("evolution: " + what + " must be in [0, 1], got " + p);
    }

    /** Kiln's CPU defaults (see the class comment), on every core of this machine. */
    public static EvolutionOptions defaults() {
        return new EvolutionOptions(512, 4, 2, 512, 0.85, 0.10, 0.05, 0.2, 0.80, 0.04, 0.05, 0.01, 0.10,
                Runtime.getRuntime().availableProcessors());
    }

    /** Ansor's GPU mutation weights (tile size and auto-unroll only). */
    public EvolutionOptions forGpu() {
        return new EvolutionOptions(population, generations, randomModelGenerations, initSamples, mutationProbability,
                crossoverProbability, epsGreedy, measuredSeedRatio, 0.90, 0.10, 0, 0, 0, threads);
    }

    /** Ansor's CPU mutation weights (tile size 0.90, no register-tile mutation), the rest of these options kept. */
    public EvolutionOptions ansorCpu() {
        return new EvolutionOptions(population, generations, randomModelGenerations, initSamples, mutationProbability,
                crossoverProbability, epsGreedy, measuredSeedRatio, 0.90, 0.04, 0.05, 0.01, 0, threads);
    }

    /** These options with another population, and as many fresh random programs per round. */
    public EvolutionOptions withPopulation(int n) {
        return new EvolutionOptions(n, generations, randomModelGenerations, n, mutationProbability,
                crossoverProbability, epsGreedy, measuredSeedRatio, tileSizeWeight, autoUnrollWeight,
                computeLocationWeight, parallelWeight, registerTileWeight, threads);
    }

    public EvolutionOptions withInitSamples(int n) {
        return new EvolutionOptions(population, generations, randomModelGenerations, n, mutationProbability,
                crossoverProbability, epsGreedy, measuredSeedRatio, tileSizeWeight, autoUnrollWeight,
                computeLocationWeight, parallelWeight, registerTileWeight, threads);
    }

    public EvolutionOptions withGenerations(int n) {
        return new EvolutionOptions(population, n, randomModelGenerations, initSamples, mutationProbability,
                crossoverProbability, epsGreedy, measuredSeedRatio, tileSizeWeight, autoUnrollWeight,
                computeLocationWeight, parallelWeight, registerTileWeight, threads);
    }

    /** These options with crossover probability {@code p}, mutation taking at most what is left. */
    public EvolutionOptions withCrossoverProbability(double p) {
        probability("crossoverProbability", p);
        return new EvolutionOptions(population, generations, randomModelGenerations, initSamples,
                Math.min(mutationProbability, 1 - p), p, epsGreedy, measuredSeedRatio, tileSizeWeight,
                autoUnrollWeight, computeLocationWeight, parallelWeight, registerTileWeight, threads);
    }

    public EvolutionOptions withThreads(int n) {
        return new EvolutionOptions(population, generations, randomModelGenerations, initSamples, mutationProbability,
                crossoverProbability, epsGreedy, measuredSeedRatio, tileSizeWeight, autoUnrollWeight,
                computeLocationWeight, parallelWeight, registerTileWeight, n);
    }
}
