package dev.kiln.autoschedule.transfer;

import dev.kiln.autoschedule.Candidate;
import dev.kiln.autoschedule.search.SearchPolicy;
import dev.kiln.autoschedule.search.Trial;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.IntFunction;
import java.util.function.Supplier;

/**
 * A search policy that starts a task with programs transferred from its similar tasks: its first batch is
 * the {@link TransferSeeds} (asked for when the batch is, so that they come from every similar task measured
 * until then), then what the wrapped policy proposes to fill the batch. A task that resumes with trials of its
 * own in the log (the policy hears of them before its first batch) gets no first seeds, so a resumed run does
 * not seed a task twice. Each later batch is led by the similar tasks' programs that have since come to run
 * faster than this task's best ({@link TransferSeeds#better}, at most {@link #LATE_PER_BATCH}): a task visited
 * early, before its siblings found their good programs, would otherwise never see them (the QDQ ResNet-50's
 * layer-2 3x3 conv ran 0.345 ms where layer 1's program, adapted, runs 0.28). It never proposes a program already
 * measured. Every transferred program says where it came from ({@link #transferredFrom}), which the search loop
 * writes into the log.
 */
public final class TransferPolicy implements SearchPolicy, AutoCloseable {
    private static final System.Logger LOG = System.getLogger(TransferPolicy.class.getName());

    private final SearchPolicy inner;
    private final Supplier<List<TransferSeeds.Seed>> seeds;
    private final IntFunction<List<TransferSeeds.Seed>> late;
    private final String taskName;
    private final Map<String, String> origin = new LinkedHashMap<>();
    private boolean started;

    /** The most programs transferred into a later batch. */
    public static final int LATE_PER_BATCH = 2;

    /** {@code inner} with a first batch led by {@code seeds} (made when that batch is asked for), no later ones. */
    public TransferPolicy(SearchPolicy inner, Supplier<List<TransferSeeds.Seed>> seeds, String taskName) {
        this(inner, seeds, n -> List.of(), taskName);
    }

    /**
     * {@code inner} with a first batch led by {@code seeds} and each later batch led by {@code late.apply(k)}, at
     * most {@code k} programs faster than the task's best (made when the batch is asked for).
     */
    public TransferPolicy(
            SearchPolicy inner,
            Supplier<List<TransferSeeds.Seed>> seeds,
            IntFunction<List<TransferSeeds.Seed>> late,
            String taskName) {
        this.inner = Objects.requireNonNull(inner, "inner");
        this.seeds = Objects.requireNonNull(seeds, "seeds");
        this.late = Objects.requireNonNull(late, "late");
        this.taskName = Objects.requireNonNull(taskName, "taskName");
    }

    @Override
    public String name() {
        return inner.name() + "+transfer";
    }

    @Override
    public List<Candidate> nextBatch(int n, Set<String> measured) {
        boolean first = !started;
        started = true;
        List<Candidate> out = new ArrayList<>();
        Set<String> taken = new HashSet<>(measured);
        Set<String> sources = new HashSet<>();
        List<TransferSeeds.Seed> offered = first ? seeds.get() : late.apply(Math.min(LATE_PER_BATCH, n));
        for (TransferSeeds.Seed s : offered) {
            if (out.size() >= n) break;
            if (!taken.add(s.candidate().key())) continue;
            out.add(s.candidate());
            origin.put(s.candidate().key(), s.from());
            sources.add(s.from());
        }
        if (!out.isEmpty()) {
            LOG.log(
                    System.Logger.Level.INFO,
                    "tune {0}: {1} program(s) transferred from {2} similar task(s){3}",
                    taskName,
                    out.size(),
                    sources.size(),
                    first ? "" : ", faster than its own best");
        }
        if (out.size() < n) out.addAll(inner.nextBatch(n - out.size(), taken));
        return out;
    }

    @Override
    public void update(List<Trial> trials) {
        if (!started && !trials.isEmpty()) started = true; // resumed with its own trials: nothing to transfer
        inner.update(trials);
    }

    @Override
    public String transferredFrom(Candidate c) {
        return origin.getOrDefault(c.key(), "");
    }

    /** How many programs this policy transferred (0 before its first batch). */
    public int transferred() {
        return origin.size();
    }

    /** The wrapped policy. */
    public SearchPolicy inner() {
        return inner;
    }

    @Override
    public void close() throws Exception {
        if (inner instanceof AutoCloseable c) c.close();
    }
}
