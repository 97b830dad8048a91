package dev.kiln.autoschedule.search;

import java.util.List;

/**
 * What one round of a {@link SearchLoop} measured ({@link SearchLoop#round}): Ansor's
 * {@code ContinueSearchOneRound}.
 *
 * @param trials    the programs measured in this round, in order, each already in the log
 * @param exhausted the policy found no new program (the search space of the task is used up);
 *                  then {@code trials} is empty
 * @param timedOut  the loop's time budget cut the round short
 */
public record SearchRound(List<Trial> trials, boolean exhausted, boolean timedOut) {
    public SearchRound {
        trials = List.copyOf(trials);
    }

    /** Programs measured in this round. */
    public int measured() {
        return trials.size();
    }

    /** Programs of this round whose measurement failed. */
    public int errors() {
        return (int) trials.stream().filter(t -> !t.result().ok()).count();
    }
}
