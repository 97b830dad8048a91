package dev.kiln.autoschedule.evolution;

import dev.kiln.autoschedule.search.TargetRules;
import dev.kiln.ir.KilnException;

/**
 * The knobs of evolutionary search. Ansor's values are population 2048, 4 generations, mutation
 * probability 0.85, eps-greedy 0.05, 20% of the population seeded with the best measured programs.
 * (Which mutations there are and their weights depend on the target: {@link TargetRules}.) Kiln's
 * defaults keep all of those
 * but the population (512, so that a round on two cores takes seconds) and spend 10% of the
 * draws on crossover (Ansor copies the parent unchanged with the 15% left after mutation).
 *
 * @param population              programs per generation
 * @param generations             rounds of selection and variation
 * @param randomModelGenerations  generations when the model's scores are random (Ansor: 2)
 * @param initSamples             fresh random programs drawn per search round
 * @param mutationProbability     share of children made by mutation
 * @param crossoverProbability    share made by crossover (the rest copy their parent)
 * @param epsGreedy               share of each measured batch drawn from the random programs
 * @param measuredSeedRatio       at most this share of the population is the best measured programs
 * @param threads                 threads that sample, mutate and score (1: the caller's thread only)
 */
public record EvolutionOptions(
        int population,
        int generations,
        int randomModelGenerations,
        int initSamples,
        double mutationProbability,
        double crossoverProbability,
        double epsGreedy,
        double measuredSeedRatio,
        int threads) {
    public EvolutionOptions {
        if (population < 2) throw new KilnException("evolution: population must be at least 2, got " + population);
        if (generations < 0 || randomModelGenerations < 0) {
            throw new KilnException(
                    "evolution: generations must not be negative, got " + generations + ", " + randomModelGenerations);
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
        if (threads < 1) throw new KilnException("evolution: threads must be at least 1, got " + threads);
    }

    private static void probability(String what, double p) {
        if (!(p >= 0 && p <= 1)) throw new KilnException("evolution: " + what + " must be in [0, 1], got " + p);
    }

    /** Kiln's CPU defaults (see the class comment), on every core of this machine. */
    public static EvolutionOptions defaults() {
        return new EvolutionOptions(
                512, 4, 2, 512, 0.85, 0.10, 0.05, 0.2, Runtime.getRuntime().availableProcessors());
    }

    /** These options with another population, and as many fresh random programs per round. */
    public EvolutionOptions withPopulation(int n) {
        return new EvolutionOptions(
                n,
                generations,
                randomModelGenerations,
                n,
                mutationProbability,
                crossoverProbability,
                epsGreedy,
                measuredSeedRatio,
                threads);
    }

    public EvolutionOptions withInitSamples(int n) {
        return new EvolutionOptions(
                population,
                generations,
                randomModelGenerations,
                n,
                mutationProbability,
                crossoverProbability,
                epsGreedy,
                measuredSeedRatio,
                threads);
    }

    public EvolutionOptions withGenerations(int n) {
        return new EvolutionOptions(
                population,
                n,
                randomModelGenerations,
                initSamples,
                mutationProbability,
                crossoverProbability,
                epsGreedy,
                measuredSeedRatio,
                threads);
    }

    /** These options with crossover probability {@code p}, mutation taking at most what is left. */
    public EvolutionOptions withCrossoverProbability(double p) {
        probability("crossoverProbability", p);
        return new EvolutionOptions(
                population,
                generations,
                randomModelGenerations,
                initSamples,
                Math.min(mutationProbability, 1 - p),
                p,
                epsGreedy,
                measuredSeedRatio,
                threads);
    }

    public EvolutionOptions withThreads(int n) {
        return new EvolutionOptions(
                population,
                generations,
                randomModelGenerations,
                initSamples,
                mutationProbability,
                crossoverProbability,
                epsGreedy,
                measuredSeedRatio,
                n);
    }
}
