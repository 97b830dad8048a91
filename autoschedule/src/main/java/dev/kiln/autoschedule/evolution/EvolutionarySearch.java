package dev.kiln.autoschedule.evolution;

import dev.kiln.autoschedule.Candidate;
import dev.kiln.autoschedule.SearchTask;
import dev.kiln.autoschedule.model.CostModel;
import dev.kiln.autoschedule.mutation.MutationRule;
import dev.kiln.autoschedule.mutation.WeightedMutation;
import dev.kiln.autoschedule.search.TargetRules;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.function.IntFunction;

/**
 * Ansor's EvolutionarySearch with node-based crossover: from a starting population, each
 * generation is scored by the cost model, the best programs not excluded (already measured) are
 * kept, and the next generation is bred from parents chosen by roulette on their scores (weights
 * {@code max(score, 0)}, uniform when all are 0): a child is a mutation (rule chosen by its weight among the target's,
 * {@link TargetRules}), a crossover with a second roulette parent of the same sketch ({@link Crossover}), or a copy of
 * the parent. Children are deduplicated by
 * {@link Candidate#key()}. Returns the best programs seen, best first.
 *
 * <p>Random choices are drawn on the caller's thread in a fixed order, each child with its own
 * generator split from the search's, so the result depends only on the seed, whatever the
 * number of threads making the children and scores.
 */
public final class EvolutionarySearch {
    private final SearchTask task;
    private final CostModel model;
    private final EvolutionOptions o;
    private final ExecutorService pool;
    private final MutationRule[] rules;
    private final double[] ruleCumulative;
    private final Stats stats;

    /** Counts of the last runs (for reports and tests). */
    public static final class Stats {
        public long children, invalid, mutations, crossovers, validCrossovers, copies, scored;
        public final Map<String, Long> validByRule = new HashMap<>();
    }

    /**
     * A search for {@code task} with its target's mutations ({@link TargetRules#of}) guided by
     * {@code model}; {@code pool} (may be null) runs the children and scores.
     */
    public EvolutionarySearch(SearchTask task, CostModel model, EvolutionOptions options, ExecutorService pool) {
        this(task, TargetRules.of(task).mutations(), model, options, pool, new Stats());
    }

    /** A search with these mutations (each picked by its weight) that adds its counts to {@code stats}. */
    public EvolutionarySearch(
            SearchTask task,
            List<WeightedMutation> mutations,
            CostModel model,
            EvolutionOptions options,
            ExecutorService pool,
            Stats stats) {
        if (mutations.isEmpty()) throw new dev.kiln.ir.KilnException("evolution needs at least one mutation rule");
        this.stats = stats;
        this.task = task;
        this.model = model;
        this.o = options;
        this.pool = pool;
        rules = mutations.stream().map(WeightedMutation::rule).toArray(MutationRule[]::new);
        double[] w = mutations.stream().mapToDouble(WeightedMutation::weight).toArray();
        double total = Arrays.stream(w).sum();
        ruleCumulative = new double[w.length];
        double c = 0;
        for (int i = 0; i < w.length; i++) ruleCumulative[i] = c += w[i] / total;
    }

    public Stats stats() {
        return stats;
    }

    /** The best {@code outSize} programs (by predicted score) bred from {@code start}, none in {@code excluded}. */
    public List<Candidate> run(List<Candidate> start, int outSize, Set<String> excluded, SplittableRandom rng) {
        int generations = model.isRandom() ? Math.min(o.generations(), o.randomModelGenerations()) : o.generations();
        Map<String, Scored> best = new HashMap<>();
        List<Candidate> pop = dedup(start);
        for (int k = 0; ; k++) {
            double[] scores = score(pop);
            for (int i = 0; i < pop.size(); i++) {
                Candidate c = pop.get(i);
                if (!excluded.contains(c.key()) && scores[i] > Double.NEGATIVE_INFINITY) {
                    best.putIfAbsent(c.key(), new Scored(c, scores[i]));
                }
            }
            if (k == generations || pop.isEmpty()) break;
            pop = breed(pop, scores, rng);
        }
        List<Scored> all = new ArrayList<>(best.values());
        all.sort((a, b) -> a.score != b.score
                ? Double.compare(b.score, a.score)
                : a.c.key().compareTo(b.c.key()));
        List<Candidate> out = new ArrayList<>();
        for (int i = 0; i < Math.min(outSize, all.size()); i++) out.add(all.get(i).c);
        return out;
    }

    private record Scored(Candidate c, double score) {}

    private static List<Candidate> dedup(List<Candidate> cs) {
        Set<String> seen = new HashSet<>();
        List<Candidate> out = new ArrayList<>();
        for (Candidate c : cs) if (seen.add(c.key())) out.add(c);
        return out;
    }

    /** Scores in chunks, one per thread. */
    double[] score(List<Candidate> pop) {
        stats.scored += pop.size();
        int t = pool == null ? 1 : o.threads();
        if (t == 1 || pop.size() < 64) return model.predict(task, pop);
        double[][] parts = parallel(
                t,
                c -> model.predict(task, pop.subList(pop.size() * c / t, pop.size() * (c + 1) / t)),
                double[][]::new);
        double[] out = new double[pop.size()];
        int at = 0;
        for (double[] p : parts) {
            System.arraycopy(p, 0, out, at, p.length);
            at += p.length;
        }
        return out;
    }

    /** A draw of the breeding plan: the operation and its parents, with the child's own generator. */
    private record Draw(int op, int rule, int parent, int other, SplittableRandom rng) {}

    private List<Candidate> breed(List<Candidate> pop, double[] scores, SplittableRandom rng) {
        List<Integer> everyone = new ArrayList<>();
        for (int i = 0; i < pop.size(); i++) everyone.add(i);
        Roulette parents = new Roulette(everyone, scores);
        // Crossover partners come from the parent's own sketch (same step-list shape), by roulette.
        Map<String, List<Integer>> bySketch = new HashMap<>();
        String[] sketch = new String[pop.size()];
        for (int i = 0; i < pop.size(); i++) {
            sketch[i] = Crossover.signature(pop.get(i));
            bySketch.computeIfAbsent(sketch[i], k -> new ArrayList<>()).add(i);
        }
        Map<String, Roulette> partners = new HashMap<>();
        bySketch.forEach((k, members) -> partners.put(k, new Roulette(members, scores)));
        List<Candidate> next = new ArrayList<>();
        Set<String> keys = new HashSet<>();
        int want = o.population();
        for (int attempt = 0; attempt < 2 && next.size() < want; attempt++) {
            int draws = attempt == 0 ? want : (want - next.size()) * 3 / 2;
            List<Draw> plan = new ArrayList<>(draws);
            for (int d = 0; d < draws; d++) {
                int parent = parents.pick(rng);
                double r = rng.nextDouble();
                int op = r < o.mutationProbability()
                        ? 0
                        : r < o.mutationProbability() + o.crossoverProbability() ? 1 : 2;
                int rule = op == 0 ? rule(rng.nextDouble()) : -1;
                int other = op == 1 ? partners.get(sketch[parent]).pick(rng) : -1;
                plan.add(new Draw(op, rule, parent, other, rng.split()));
            }
            Candidate[] children = make(pop, plan);
            for (int d = 0; d < draws && next.size() < want; d++) {
                Candidate c = children[d];
                Draw dr = plan.get(d);
                stats.children++;
                switch (dr.op) {
                    case 0 -> stats.mutations++;
                    case 1 -> stats.crossovers++;
                    default -> stats.copies++;
                }
                if (c == null) {
                    stats.invalid++;
                    continue;
                }
                if (dr.op == 0) stats.validByRule.merge(rules[dr.rule].name(), 1L, Long::sum);
                if (dr.op == 1) stats.validCrossovers++;
                if (keys.add(c.key())) next.add(c);
            }
        }
        return next;
    }

    private Candidate[] make(List<Candidate> pop, List<Draw> plan) {
        IntFunction<Candidate> one = d -> {
            Draw dr = plan.get(d);
            Candidate p = pop.get(dr.parent);
            return switch (dr.op) {
                case 0 -> rules[dr.rule].apply(task, p, dr.rng);
                case 1 -> dr.other == dr.parent ? null : Crossover.apply(task, p, pop.get(dr.other), dr.rng);
                default -> p;
            };
        };
        int t = pool == null ? 1 : o.threads();
        Candidate[] out = new Candidate[plan.size()];
        if (t == 1) {
            for (int d = 0; d < out.length; d++) out[d] = one.apply(d);
            return out;
        }
        parallel(
                t,
                c -> {
                    for (int d = c; d < out.length; d += t) out[d] = one.apply(d);
                    return null;
                },
                Object[]::new);
        return out;
    }

    private int rule(double r) {
        for (int i = 0; i < ruleCumulative.length; i++) if (r < ruleCumulative[i]) return i;
        return ruleCumulative.length - 1;
    }

    /** Roulette selection among some members of the population. */
    private static final class Roulette {
        final int[] members;
        final double[] cumulative;
        final double total;

        Roulette(List<Integer> members, double[] scores) {
            this.members = members.stream().mapToInt(Integer::intValue).toArray();
            cumulative = new double[this.members.length];
            double t = 0;
            for (int i = 0; i < this.members.length; i++) cumulative[i] = t += Math.max(scores[this.members[i]], 0);
            total = t;
        }

        int pick(SplittableRandom rng) {
            return members[EvolutionarySearch.pick(cumulative, total, rng)];
        }
    }

    private static int pick(double[] cumulative, double total, SplittableRandom rng) {
        if (!(total > 0)) return rng.nextInt(cumulative.length);
        double x = rng.nextDouble() * total;
        int lo = 0, hi = cumulative.length - 1;
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (cumulative[mid] > x) hi = mid;
            else lo = mid + 1;
        }
        return lo;
    }

    @SuppressWarnings("unchecked")
    private <T> T[] parallel(int t, IntFunction<T> task, IntFunction<T[]> array) {
        List<Future<T>> fs = new ArrayList<>();
        for (int c = 0; c < t; c++) {
            int chunk = c;
            fs.add(pool.submit(() -> task.apply(chunk)));
        }
        T[] out = array.apply(t);
        for (int c = 0; c < t; c++) {
            try {
                out[c] = fs.get(c).get();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while searching", e);
            } catch (java.util.concurrent.ExecutionException e) {
                if (e.getCause() instanceof RuntimeException r) throw r;
                throw new IllegalStateException(e.getCause());
            }
        }
        return out;
    }
}
