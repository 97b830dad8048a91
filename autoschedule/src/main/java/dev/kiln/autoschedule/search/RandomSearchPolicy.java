package dev.kiln.autoschedule.search;

import dev.kiln.autoschedule.Candidate;
import dev.kiln.autoschedule.SearchTask;
import dev.kiln.autoschedule.annotate.InitPopulation;
import dev.kiln.autoschedule.annotate.InvalidSample;
import dev.kiln.autoschedule.sketch.Sketch;
import dev.kiln.ir.KilnException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;

/**
 * The search of this stage of the auto-scheduler: every batch is fresh random annotations of the
 * task's sketches ({@link InitPopulation#draw}, each draw with its own generator split from the
 * policy's), with programs already measured or already in the batch left out. It learns nothing
 * from measurements; the loop keeps the best. A batch comes up short only after
 * {@code maxFruitlessDraws} draws in a row gave no new valid program.
 */
public final class RandomSearchPolicy implements SearchPolicy {
    private final InitPopulation population;
    private final SplittableRandom rng;
    private final int maxFruitlessDraws;
    private final Map<String, Integer> invalid = new LinkedHashMap<>();
    private long draws;

    /**
     * Random sampling of {@code sketches} with the annotation rules of the task's target
     * ({@link TargetRules#of}) from {@code seed}, giving up after {@code maxFruitlessDraws}.
     */
    public RandomSearchPolicy(SearchTask task, List<Sketch> sketches, long seed, int maxFruitlessDraws) {
        this(TargetRules.of(task).population(task, sketches), seed, maxFruitlessDraws);
    }

    /** Random sampling with {@code population}'s sketches and rules from {@code seed}. */
    public RandomSearchPolicy(InitPopulation population, long seed, int maxFruitlessDraws) {
        if (maxFruitlessDraws <= 0)
            throw new KilnException("maxFruitlessDraws must be positive, not " + maxFruitlessDraws);
        this.population = population;
        this.rng = new SplittableRandom(seed);
        this.maxFruitlessDraws = maxFruitlessDraws;
    }

    /** Random sampling of the task's sketches under {@code rules} from {@code seed}. */
    public static RandomSearchPolicy of(SearchTask task, TargetRules rules, long seed) {
        return new RandomSearchPolicy(
                rules.population(task, rules.sketches(task)), seed, InitPopulation.DEFAULT_MAX_FRUITLESS_DRAWS);
    }

    /** Random sampling of the task's CPU sketches ({@link TargetRules#cpu()}) from {@code seed}. */
    public static RandomSearchPolicy cpu(SearchTask task, long seed) {
        return of(task, TargetRules.cpu(), seed);
    }

    /** Random sampling of the task's sketches under its target's rules ({@link TargetRules#of}) from {@code seed}. */
    public static RandomSearchPolicy forTask(SearchTask task, long seed) {
        return of(task, TargetRules.of(task), seed);
    }

    @Override
    public String name() {
        return "random";
    }

    @Override
    public List<Candidate> nextBatch(int n, Set<String> measured) {
        List<Candidate> out = new ArrayList<>();
        Set<String> taken = new HashSet<>();
        int fruitless = 0;
        while (out.size() < n && fruitless < maxFruitlessDraws) {
            draws++;
            Candidate c;
            try {
                c = population.draw(rng.split());
            } catch (InvalidSample e) {
                invalid.merge(e.rule(), 1, Integer::sum);
                fruitless++;
                continue;
            }
            if (measured.contains(c.key()) || !taken.add(c.key())) {
                fruitless++;
                continue;
            }
            out.add(c);
            fruitless = 0;
        }
        return out;
    }

    @Override
    public void update(List<Trial> trials) {
        // Random sampling does not learn; the loop keeps the best.
    }

    /** Draws made so far. */
    public long draws() {
        return draws;
    }

    /** Draws dropped as invalid so far, by the rule that rejected them. */
    public Map<String, Integer> invalidDraws() {
        return Map.copyOf(invalid);
    }
}
