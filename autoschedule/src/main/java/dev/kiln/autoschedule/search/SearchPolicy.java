package dev.kiln.autoschedule.search;

import dev.kiln.autoschedule.Candidate;
import java.util.List;
import java.util.Set;

/**
 * How a search picks the programs to measure next: the part of the tuning loop that changes as
 * the auto-scheduler grows (random sampling now; evolution guided by a learned cost model next).
 * The {@link SearchLoop} asks for a batch, measures it, logs it and hands the trials back.
 *
 * <p>A policy must be deterministic given its seed and the sequence of calls it receives, so
 * that the same seed and log give the same search.
 */
public interface SearchPolicy {

    /** A short name for messages ("random"). */
    String name();

    /**
     * Up to {@code n} new programs, distinct, none whose {@link Candidate#key()} is in
     * {@code measured}. Fewer, or none, means the policy found no more new programs (a small
     * search space that has been measured); the loop then stops.
     */
    List<Candidate> nextBatch(int n, Set<String> measured);

    /**
     * The trials of the last batch, in the order measured. Before the first batch of a resumed
     * run, the trials restored from the log (those whose schedule still replays) come through
     * here too, so that a policy that learns starts from everything measured.
     */
    void update(List<Trial> trials);

    /**
     * The workload key of the similar task {@code c} was adapted from, when this policy proposed it as a
     * transferred program ({@link dev.kiln.autoschedule.transfer.TransferPolicy}); empty otherwise. The loop
     * writes it into the program's log records.
     */
    default String transferredFrom(Candidate c) {
        return "";
    }
}
