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
import java.util.function.Supplier;

/**
 * A search policy that starts a task with programs transferred from its similar tasks: its first batch is
 * the {@link TransferSeeds} (asked for when the batch is, so that they come from every similar task measured
 * until then), then what the wrapped policy proposes to fill the batch. Nothing is transferred to a task that
 * resumes with trials of its own in the log (the policy hears of them before its first batch), so a resumed
 * run does not seed a task twice, and never proposes a program already measured. Every transferred program
 * says where it came from ({@link #transferredFrom}), which the search loop writes into the log.
 */
public final class TransferPolicy implements SearchPolicy, AutoCloseable {
    private static final System.Logger LOG = System.getLogger(TransferPolicy.class.getName());

    private final SearchPolicy inner;
    private final Supplier<List<TransferSeeds.Seed>> seeds;
    private final String taskName;
    private final Map<String, String> origin = new LinkedHashMap<>();
    private boolean started;

    /** {@code inner} with a first batch led by {@code seeds} (made when that batch is asked for). */
    public TransferPolicy(SearchPolicy inner, Supplier<List<TransferSeeds.Seed>> seeds, String taskName) {
        this.inner = Objects.requireNonNull(inner, "inner");
        this.seeds = Objects.requireNonNull(seeds, "seeds");
        this.taskName = Objects.requireNonNull(taskName, "taskName");
    }

    @Override
    public String name() {
        return inner.name() + "+transfer";
    }

    @Override
    public List<Candidate> nextBatch(int n, Set<String> measured) {
        if (started) return inner.nextBatch(n, measured);
        started = true;
        List<Candidate> out = new ArrayList<>();
        Set<String> taken = new HashSet<>(measured);
        Set<String> sources = new HashSet<>();
        for (TransferSeeds.Seed s : seeds.get()) {
            if (out.size() >= n) break;
            if (!taken.add(s.candidate().key())) continue;
            out.add(s.candidate());
            origin.put(s.candidate().key(), s.from());
            sources.add(s.from());
        }
        if (!out.isEmpty()) {
            LOG.log(
                    System.Logger.Level.INFO,
                    "tune {0}: {1} program(s) transferred from {2} similar task(s)",
                    taskName,
                    out.size(),
                    sources.size());
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
