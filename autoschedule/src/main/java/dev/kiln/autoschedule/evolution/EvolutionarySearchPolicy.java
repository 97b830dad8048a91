package dev.kiln.autoschedule.evolution;

import dev.kiln.autoschedule.Candidate;
import dev.kiln.autoschedule.SearchTask;
import dev.kiln.autoschedule.annotate.CheckJvmTiles;
import dev.kiln.autoschedule.annotate.InitPopulation;
import dev.kiln.autoschedule.annotate.InvalidSample;
import dev.kiln.autoschedule.measure.MeasureResult;
import dev.kiln.autoschedule.model.CostModel;
import dev.kiln.autoschedule.model.GbdtCostModel;
import dev.kiln.autoschedule.model.PretrainedModel;
import dev.kiln.autoschedule.mutation.WeightedMutation;
import dev.kiln.autoschedule.search.SearchPolicy;
import dev.kiln.autoschedule.search.TargetRules;
import dev.kiln.autoschedule.search.Trial;
import dev.kiln.autoschedule.sketch.Sketch;
import dev.kiln.ir.KilnException;
import dev.kiln.schedule.Step;
import dev.kiln.schedule.TensorizeStep;
import dev.kiln.target.Target;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;

/**
 * Ansor's search policy: every round samples fresh random programs from the sketches, adds the
 * best measured programs (up to {@code measuredSeedRatio} of the population, fastest first),
 * evolves them with the cost model ({@link EvolutionarySearch}) into twice as many candidates as
 * the round measures, and picks the batch eps-greedily: the best predicted programs, and
 * {@code floor(epsGreedy * n)} programs drawn at random from the fresh samples (exploration).
 * Measured programs are never proposed again; a round that finds nothing new is searched once
 * more before the policy gives up (Ansor's retry on empty). Every measurement goes to the model
 * ({@link #update}). A round that measures few programs uses a smaller population
 * ({@link #scaled}).
 *
 * <p>Deterministic for a seed and a sequence of calls, whatever the number of threads.
 */
public final class EvolutionarySearchPolicy implements SearchPolicy, AutoCloseable {
    private final SearchTask task;
    private final InitPopulation sampler;
    private final List<WeightedMutation> mutations;
    private final CostModel model;
    private final EvolutionOptions options;
    private final SplittableRandom rng;
    private final ExecutorService pool;
    private final EvolutionarySearch.Stats stats = new EvolutionarySearch.Stats();
    private final List<Trial> measuredValid = new ArrayList<>();
    private long searchNanos, rounds;

    /**
     * A policy over {@code sketches} guided by {@code model}, under the rules of the task's target
     * ({@link TargetRules#of}: its annotation rules sample the programs, its mutations evolve them).
     */
    public EvolutionarySearchPolicy(
            SearchTask task, List<Sketch> sketches, CostModel model, EvolutionOptions options, long seed) {
        this(task, TargetRules.of(task), sketches, model, options, seed);
    }

    /** A policy over {@code sketches} under {@code rules} (annotation and mutations), guided by {@code model}. */
    public EvolutionarySearchPolicy(
            SearchTask task,
            TargetRules rules,
            List<Sketch> sketches,
            CostModel model,
            EvolutionOptions options,
            long seed) {
        this(task, rules.population(task, sketches), rules.mutations(), model, options, seed);
    }

    /**
     * A policy whose fresh programs come from {@code sampler}, evolved with {@code mutations},
     * guided by {@code model}.
     */
    public EvolutionarySearchPolicy(
            SearchTask task,
            InitPopulation sampler,
            List<WeightedMutation> mutations,
            CostModel model,
            EvolutionOptions options,
            long seed) {
        this.task = task;
        this.sampler = sampler;
        this.mutations = List.copyOf(mutations);
        this.model = model;
        this.options = options;
        this.rng = new SplittableRandom(seed);
        this.pool = options.threads() > 1 ? pool(options.threads()) : null;
    }

    /**
     * Evolution with the CPU rules ({@link TargetRules#cpu()}) and the learned model alone, not started from the
     * pretrained model ({@link #forTask(SearchTask, long)} is the default), {@link EvolutionOptions#defaults()}: the
     * baseline of the search benchmarks.
     */
    public static EvolutionarySearchPolicy cpu(SearchTask task, long seed) {
        TargetRules rules = TargetRules.cpu();
        return new EvolutionarySearchPolicy(
                task, rules, rules.sketches(task), GbdtCostModel.defaults(seed), EvolutionOptions.defaults(), seed);
    }

    /**
     * The default policy of a task: its sketches under its target's rules ({@link TargetRules#of};
     * on a GPU children that break the device's limits are dropped), the learned model
     * ({@link #defaultModel}), {@link EvolutionOptions#defaults()}.
     */
    public static EvolutionarySearchPolicy forTask(SearchTask task, long seed) {
        TargetRules rules = TargetRules.of(task);
        List<Sketch> sketches = rules.sketches(task);
        return new EvolutionarySearchPolicy(
                task, rules, sketches, defaultModel(task, sketches, seed), EvolutionOptions.defaults(), seed);
    }

    /** The default policy of a task with the learned model alone, not started from the pretrained model. */
    public static EvolutionarySearchPolicy withoutPretraining(SearchTask task, long seed) {
        return forTask(task, GbdtCostModel.defaults(seed), seed);
    }

    /**
     * The default cost model of a task: {@link GbdtCostModel#defaults}, on an LLVM CPU target started from the model
     * shipped with Kiln ({@link PretrainedModel#shipped()}, trained on Kiln's own CPU records: a new task is scored
     * by it from the first round, then boosted on with its own measurements); alone on a GPU or the JVM backend, and
     * for a task with a tensorized sketch ({@link #tensorized}), whose programs it has not seen. A build without the
     * shipped model says so.
     */
    public static GbdtCostModel defaultModel(SearchTask task, long seed) {
        boolean cpu = task.target().kind() == Target.Kind.CPU && !CheckJvmTiles.isJvm(task.target());
        return defaultModel(task, cpu ? TargetRules.of(task).sketches(task) : List.of(), seed);
    }

    private static GbdtCostModel defaultModel(SearchTask task, List<Sketch> sketches, long seed) {
        GbdtCostModel m = GbdtCostModel.defaults(seed);
        if (task.target().kind() != Target.Kind.CPU || CheckJvmTiles.isJvm(task.target())) return m;
        // The shipped model saw float32 programs only. On a tensorized stage it ranked one-vector register tiles
        // first: the int8 GEMM 1024 at 2 threads, 100 trials, ended at 0.79-0.80x oneDNN on two seeds of three, all
        // its measured programs after the first round 16 x 1 tiles; started without it, 0.96x on both.
        if (tensorized(sketches)) return m;
        return m.withPretrained(PretrainedModel.shipped()
                .orElseThrow(() -> new KilnException("this build of Kiln lacks its pretrained CPU cost model "
                        + "(the resource of PretrainedModel.bundled()); tune with "
                        + "EvolutionarySearchPolicy.withoutPretraining to search without it")));
    }

    /** Whether a sketch among {@code sketches} computes a stage with a tensor intrinsic (a {@link TensorizeStep}). */
    public static boolean tensorized(List<Sketch> sketches) {
        for (Sketch sk : sketches) for (Step st : sk.state().steps()) if (st instanceof TensorizeStep) return true;
        return false;
    }

    /**
     * The default policy of the task (its sketches under its target's rules,
     * {@link EvolutionOptions#defaults()}) guided by {@code model}, a model that may be shared with
     * other tasks (the task scheduler's shared cost model).
     */
    public static EvolutionarySearchPolicy forTask(SearchTask task, CostModel model, long seed) {
        TargetRules rules = TargetRules.of(task);
        return new EvolutionarySearchPolicy(
                task, rules, rules.sketches(task), model, EvolutionOptions.defaults(), seed);
    }

    @Override
    public String name() {
        return "evolution";
    }

    @Override
    public List<Candidate> nextBatch(int n, Set<String> measured) {
        // Ansor's retry_search_one_round_on_empty: a round that finds nothing new is searched once more.
        List<Candidate> out = searchRound(n, measured);
        return out.isEmpty() ? searchRound(n, measured) : out;
    }

    private List<Candidate> searchRound(int n, Set<String> measured) {
        long t0 = System.nanoTime();
        EvolutionOptions o = scaled(n);
        List<Candidate> fresh = sample(o.initSamples());
        List<Candidate> population = new ArrayList<>(fresh);
        int seeds = (int) Math.min(measuredValid.size(), Math.floor(o.measuredSeedRatio() * o.population()));
        for (int i = 0; i < seeds; i++) population.add(measuredValid.get(i).candidate());
        List<Candidate> best = new EvolutionarySearch(task, mutations, model, o, pool, stats)
                .run(population, 2 * n, measured, rng.split());

        int numRandom = (int) Math.floor(options.epsGreedy() * n);
        List<Candidate> randoms = new ArrayList<>();
        for (Candidate c : fresh) if (!measured.contains(c.key())) randoms.add(c);
        List<Candidate> out = new ArrayList<>();
        Set<String> taken = new HashSet<>();
        int i = 0;
        while (out.size() < n - numRandom && i < best.size()) add(best.get(i++), out, taken, measured);
        while (out.size() < n && !randoms.isEmpty())
            add(randoms.remove(rng.nextInt(randoms.size())), out, taken, measured);
        while (out.size() < n && i < best.size()) add(best.get(i++), out, taken, measured);
        searchNanos += System.nanoTime() - t0;
        rounds++;
        return out;
    }

    /** Daemon workers that end after a few idle seconds, so that a policy nobody closes leaks nothing. */
    private static ExecutorService pool(int threads) {
        java.util.concurrent.ThreadPoolExecutor p = new java.util.concurrent.ThreadPoolExecutor(
                threads,
                threads,
                5,
                java.util.concurrent.TimeUnit.SECONDS,
                new java.util.concurrent.LinkedBlockingQueue<>(),
                r -> {
                    Thread t = new Thread(r, "kiln-evolution");
                    t.setDaemon(true);
                    return t;
                });
        p.allowCoreThreadTimeOut(true);
        return p;
    }

    /**
     * The options of a round that measures {@code n} programs: a small batch does not need the
     * whole population, so population and fresh samples are capped at {@code max(64, 16 n)}.
     */
    EvolutionOptions scaled(int n) {
        int cap = Math.max(64, 16 * n);
        if (options.population() <= cap && options.initSamples() <= cap) return options;
        return options.withPopulation(Math.min(options.population(), cap))
                .withInitSamples(Math.min(options.initSamples(), cap));
    }

    private static void add(Candidate c, List<Candidate> out, Set<String> taken, Set<String> measured) {
        if (!measured.contains(c.key()) && taken.add(c.key())) out.add(c);
    }

    /** {@code n} random draws (fewer after duplicates and invalid draws), in draw order. */
    private List<Candidate> sample(int n) {
        SplittableRandom[] rs = new SplittableRandom[n];
        for (int i = 0; i < n; i++) rs[i] = rng.split();
        Candidate[] drawn = new Candidate[n];
        int t = pool == null ? 1 : options.threads();
        if (t == 1) {
            for (int i = 0; i < n; i++) drawn[i] = draw(rs[i]);
        } else {
            List<Future<?>> fs = new ArrayList<>();
            for (int c = 0; c < t; c++) {
                int first = c;
                fs.add(pool.submit(() -> {
                    for (int i = first; i < n; i += t) drawn[i] = draw(rs[i]);
                }));
            }
            for (Future<?> f : fs) {
                try {
                    f.get();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException("interrupted while sampling", e);
                } catch (java.util.concurrent.ExecutionException e) {
                    if (e.getCause() instanceof RuntimeException r) throw r;
                    throw new IllegalStateException(e.getCause());
                }
            }
        }
        List<Candidate> out = new ArrayList<>();
        Set<String> seen = new HashSet<>();
        for (Candidate c : drawn) if (c != null && seen.add(c.key())) out.add(c);
        return out;
    }

    private Candidate draw(SplittableRandom r) {
        try {
            return sampler.draw(r);
        } catch (InvalidSample e) {
            return null;
        }
    }

    @Override
    public void update(List<Trial> trials) {
        if (trials.isEmpty()) return;
        List<Candidate> cs = new ArrayList<>();
        List<MeasureResult> rs = new ArrayList<>();
        for (Trial t : trials) {
            cs.add(t.candidate());
            rs.add(t.result());
            if (t.result().ok()) measuredValid.add(t);
        }
        measuredValid.sort(Comparator.comparingDouble((Trial t) -> t.result().cost()));
        model.update(task, cs, rs);
    }

    /** The cost model guiding the search. */
    public CostModel model() {
        return model;
    }

    /** Counts of the evolutionary search so far. */
    public EvolutionarySearch.Stats stats() {
        return stats;
    }

    /** Seconds spent choosing batches so far (sampling, evolution, scoring). */
    public double searchSeconds() {
        return searchNanos / 1e9;
    }

    /** Rounds searched so far. */
    public long rounds() {
        return rounds;
    }

    /** Stops the worker threads. */
    @Override
    public void close() {
        if (pool != null) pool.shutdownNow();
    }
}
