package dev.kiln.autoschedule.annotate;

import dev.kiln.autoschedule.Candidate;
import dev.kiln.autoschedule.InferBound;
import dev.kiln.autoschedule.SearchTask;
import dev.kiln.autoschedule.sketch.Sketch;
import dev.kiln.ir.KilnException;
import dev.kiln.schedule.LoopState;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;

/**
 * Random annotation of sketches into concrete programs (Ansor's SampleInitPopulation without
 * the cost model). Each draw takes its own generator split from the caller's, picks a sketch
 * uniformly, fills its tile sizes ({@link InitFillTileSize}) and applies the rules in order (the
 * target's, {@code dev.kiln.autoschedule.search.TargetRules}; CPU: {@link InitChangeComputeLocation},
 * {@link InitParallel}, {@link InitUnroll}, {@link InitVectorization}). A draw a rule rejects, or with nested parallel
 * loops, is dropped and counted; a draw whose printed state (its {@link Candidate#key()}) was already drawn is a
 * duplicate. Sampling stops at {@code n} distinct candidates, or after {@code maxFruitlessDraws}
 * draws in a row that added none (a small search space). The same generator state gives the
 * same candidates. {@link #draw} and {@link #annotate} depend only on their generator and may be
 * called from several threads (the factorisation memo is shared and thread-safe).
 */
public final class InitPopulation {
    /** Consecutive draws without a new candidate after which sampling gives up by default. */
    public static final int DEFAULT_MAX_FRUITLESS_DRAWS = 1000;

    private final SearchTask task;
    private final List<Sketch> sketches;
    private final List<InitRule> rules;
    private final InitFillTileSize fill;
    private final int maxFruitlessDraws;

    /** What a sampling run produced and dropped. */
    public record Result(List<Candidate> candidates, Stats stats) {
        public Result {
            candidates = List.copyOf(candidates);
        }
    }

    /**
     * Counts of one sampling run: draws made, duplicates, and dropped draws by the name of the
     * rule that rejected them ({@link NestedParallel#NAME} for nested parallelism), with the first
     * reason given for each.
     */
    public record Stats(int draws, int duplicates, Map<String, Integer> invalid, Map<String, String> firstReason) {
        public Stats {
            invalid = Collections.unmodifiableMap(new LinkedHashMap<>(invalid));
            firstReason = Collections.unmodifiableMap(new LinkedHashMap<>(firstReason));
        }

        public int totalInvalid() {
            return invalid.values().stream().mapToInt(Integer::intValue).sum();
        }
    }

    /** A sampler with these rules (after tile filling), a shared factorisation memo and a give-up limit. */
    public InitPopulation(
            SearchTask task,
            List<Sketch> sketches,
            List<InitRule> rules,
            FactorizationMemo memo,
            int maxFruitlessDraws) {
        this(task, sketches, rules, new InitFillTileSize(memo), maxFruitlessDraws);
    }

    /**
     * A sampler with these rules after this tile filling (for instance without register-tile draws), and a give-up
     * limit.
     */
    public InitPopulation(
            SearchTask task,
            List<Sketch> sketches,
            List<InitRule> rules,
            InitFillTileSize fill,
            int maxFruitlessDraws) {
        if (sketches.isEmpty()) throw new KilnException("sampling needs at least one sketch");
        if (maxFruitlessDraws <= 0)
            throw new KilnException("maxFruitlessDraws must be positive, not " + maxFruitlessDraws);
        this.task = task;
        this.sketches = List.copyOf(sketches);
        this.rules = List.copyOf(rules);
        this.fill = fill;
        this.maxFruitlessDraws = maxFruitlessDraws;
    }

    /** {@code n} distinct concrete candidates (fewer if the space runs out). */
    public Result sample(int n, SplittableRandom rng) {
        if (n < 0) throw new KilnException("cannot sample " + n + " candidates");
        List<Candidate> out = new ArrayList<>();
        Set<String> seen = new HashSet<>();
        Map<String, Integer> invalid = new LinkedHashMap<>();
        Map<String, String> reasons = new LinkedHashMap<>();
        int draws = 0, duplicates = 0, fruitless = 0;
        while (out.size() < n && fruitless < maxFruitlessDraws) {
            draws++;
            SplittableRandom r = rng.split();
            Candidate c;
            try {
                c = draw(r);
            } catch (InvalidSample e) {
                invalid.merge(e.rule(), 1, Integer::sum);
                reasons.putIfAbsent(e.rule(), e.getMessage());
                fruitless++;
                continue;
            }
            if (seen.add(c.key())) {
                out.add(c);
                fruitless = 0;
            } else {
                duplicates++;
                fruitless++;
            }
        }
        return new Result(out, new Stats(draws, duplicates, invalid, reasons));
    }

    /** One random annotation of a random sketch; throws {@link InvalidSample} if it is not a valid program. */
    public Candidate draw(SplittableRandom rng) {
        Sketch sketch = sketches.get(rng.nextInt(sketches.size()));
        return annotate(sketch, rng);
    }

    /** One random annotation of {@code sketch}. */
    public Candidate annotate(Sketch sketch, SplittableRandom rng) {
        LoopState s = fill.apply(task, sketch, rng);
        for (InitRule rule : rules) s = rule.apply(task, s, rng);
        if (NestedParallel.has(s)) throw new InvalidSample(NestedParallel.NAME, "a parallel loop runs inside another");
        try {
            // Rules after InitChangeComputeLocation already see inferred bounds; inferring again is
            // cheap next to the replay and makes the key right for any rule list.
            return Candidate.ofInferred(InferBound.apply(s));
        } catch (KilnException e) {
            throw new InvalidSample("InferBound", e.getMessage());
        }
    }
}
