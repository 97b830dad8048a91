package dev.kiln.autoschedule.transfer;

import dev.kiln.autoschedule.Candidate;
import dev.kiln.autoschedule.SearchTask;
import dev.kiln.autoschedule.log.LogRecord;
import dev.kiln.autoschedule.log.ProgramCosts;
import dev.kiln.autoschedule.log.TuningLog;
import dev.kiln.ir.KilnException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * The programs a starting task gets from its similar tasks: the valid programs measured so far (in this run's
 * log, which holds a resumed run's records too) of every other task with the same structural key, fastest
 * first by throughput (FLOP/s of their own task, so that tasks of different sizes compare), each adapted with
 * {@link ScheduleTransfer} (refitted and lowered); the first {@code limit} distinct programs that adapt, out of
 * the fastest {@code 4 x limit} (adapting costs a lowering each). A
 * program measured more than once counts by its median. Deterministic: ties keep the tasks' and the log's
 * order.
 */
public final class TransferSeeds {
    private TransferSeeds() {}

    /** A program adapted to the starting task, and the workload key of the task it came from. */
    public record Seed(Candidate candidate, String from) {}

    /**
     * Up to {@code limit} adapted programs for {@code to} from the {@code similar} tasks' records in {@code log}
     * (tasks other than {@code to} with its structural key; others are ignored).
     */
    public static List<Seed> of(SearchTask to, List<SearchTask> similar, TuningLog log, int limit) {
        return adapted(to, similar, log, Double.NEGATIVE_INFINITY, new HashSet<>(), limit);
    }

    /**
     * Programs of the similar tasks that run faster than {@code to}'s own best, for a task the search comes back to:
     * the valid programs of every other task with {@code to}'s structural key whose throughput beats {@code to}'s
     * best program's in {@code log} by more than {@code margin} (1.1: 10%), fastest first, skipping the ones in
     * {@code seen} (their source key and steps; each program considered is added, adapted or not, so none is tried
     * twice), each adapted with {@link ScheduleTransfer}; at most {@code limit} distinct ones, out of at most {@code
     * 4 x limit} adaptations. Empty while {@code to} has no valid program of its own (its first batch takes {@link
     * #of}'s seeds).
     */
    public static List<Seed> better(
            SearchTask to, List<SearchTask> similar, TuningLog log, Set<String> seen, int limit, double margin) {
        if (limit < 1) throw new KilnException("transfer: the number of transferred programs must be at least 1");
        var own = ProgramCosts.of(log.records(to.workloadKey(), to.targetDescription()))
                .best();
        if (own.isEmpty() || !(own.get().seconds() > 0)) return List.of();
        return adapted(to, similar, log, to.dag().flopCount() / own.get().seconds() * margin, seen, limit);
    }

    /**
     * The similar tasks' valid programs of throughput above {@code bar} and not in {@code seen}, fastest first,
     * adapted to {@code to}: up to {@code limit} distinct ones out of at most {@code 4 x limit} adaptations, each
     * program tried added to {@code seen}.
     */
    private static List<Seed> adapted(
            SearchTask to, List<SearchTask> similar, TuningLog log, double bar, Set<String> seen, int limit) {
        if (limit < 1) throw new KilnException("transfer: the number of transferred programs must be at least 1");
        String key = to.structureKey();
        record Source(SearchTask task, LogRecord record, double rate, String id) {}
        List<Source> sources = new ArrayList<>();
        for (SearchTask t : similar) {
            if (t.workloadKey().equals(to.workloadKey()) || !t.structureKey().equals(key)) continue;
            for (ProgramCosts.Program p : ProgramCosts.of(log.records(t.workloadKey(), t.targetDescription()))
                    .programs()) {
                double s = p.seconds();
                if (!(s > 0) || Double.isInfinite(s)) continue;
                double rate = t.dag().flopCount() / s;
                String id = t.workloadKey() + " " + p.first().steps();
                if (rate > bar && !seen.contains(id)) sources.add(new Source(t, p.first(), rate, id));
            }
        }
        sources.sort(Comparator.comparingDouble((Source s) -> -s.rate()));
        List<Seed> out = new ArrayList<>();
        Set<String> keys = new HashSet<>();
        int tries = 0;
        for (Source s : sources) {
            if (out.size() >= limit || tries++ >= 4 * limit) break;
            seen.add(s.id());
            var c = ScheduleTransfer.adapt(s.record().schedule(s.task()), to, true);
            if (c.isPresent() && keys.add(c.get().key()))
                out.add(new Seed(c.get(), s.task().workloadKey()));
        }
        return out;
    }
}
