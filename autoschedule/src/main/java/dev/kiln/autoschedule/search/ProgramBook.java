package dev.kiln.autoschedule.search;

import dev.kiln.autoschedule.Candidate;
import dev.kiln.autoschedule.log.ProgramCosts;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The measured programs of a search and what each costs, by the log's rule
 * ({@link ProgramCosts}): the median of a program's valid measurements; a program with a failed
 * measurement (a re-measure that crashed, timed out or gave a wrong result) is never the best.
 * Ties go to the program measured first.
 */
final class ProgramBook {
    /** One program: the trial that first measured it, its valid costs and how many times it was measured. */
    static final class Entry {
        final Candidate candidate;
        final int trial;
        final List<Double> costs = new ArrayList<>();
        int measurements;
        boolean failed;

        Entry(Candidate candidate, int trial) {
            this.candidate = candidate;
            this.trial = trial;
        }

        double seconds() {
            return failed ? Double.POSITIVE_INFINITY : ProgramCosts.combine(costs);
        }
    }

    private final Map<String, Entry> programs = new LinkedHashMap<>();

    /**
     * Records a measurement of {@code c} ({@code seconds} when valid, else a failure) at trial
     * {@code trial}; returns whether it is the program's first.
     */
    boolean add(Candidate c, boolean valid, double seconds, int trial) {
        Entry e = programs.get(c.key());
        boolean first = e == null;
        if (first) programs.put(c.key(), e = new Entry(c, trial));
        e.measurements++;
        if (valid) e.costs.add(seconds);
        else e.failed = true;
        return first;
    }

    /** The cheapest program that never failed, if any (one pass; ties: measured first). */
    Optional<BestProgram> best() {
        Entry best = null;
        for (Entry e : programs.values()) {
            if (!e.failed && !e.costs.isEmpty() && (best == null || e.seconds() < best.seconds())) best = e;
        }
        return Optional.ofNullable(best).map(ProgramBook::program);
    }

    /** The program of an entry as the search reports it. */
    static BestProgram program(Entry e) {
        return new BestProgram(e.candidate.schedule(), e.seconds(), e.trial);
    }

    /** The {@code k} cheapest programs that never failed, cheapest first (ties: measured first). */
    List<Entry> top(int k) {
        return programs.values().stream()
                .filter(e -> !e.failed && !e.costs.isEmpty())
                .sorted(Comparator.comparingDouble(Entry::seconds))
                .limit(k)
                .toList();
    }
}
