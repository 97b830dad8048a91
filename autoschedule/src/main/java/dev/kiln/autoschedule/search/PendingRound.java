package dev.kiln.autoschedule.search;

import dev.kiln.autoschedule.Candidate;
import dev.kiln.autoschedule.measure.MeasureResult;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * A round of a {@link SearchLoop} whose programs were handed to the measurer ({@link SearchLoop#startRound}) and
 * whose results are not applied yet: {@link SearchLoop#finishRound} waits for them, logs them and gives them to the
 * policy. Until then the loop starts no other round.
 */
public final class PendingRound {
    private final SearchLoop loop;
    private final List<Candidate> batch;
    private final CompletableFuture<List<MeasureResult>> results;
    private boolean finished;

    PendingRound(SearchLoop loop, List<Candidate> batch, CompletableFuture<List<MeasureResult>> results) {
        this.loop = loop;
        this.batch = List.copyOf(batch);
        this.results = results;
    }

    /** The programs of the round, in order (empty: the policy found nothing new, the search space is used up). */
    public List<Candidate> batch() {
        return batch;
    }

    /** Completes when every program of the round is measured (or the measurement failed). */
    public CompletableFuture<?> measured() {
        return results;
    }

    SearchLoop loop() {
        return loop;
    }

    CompletableFuture<List<MeasureResult>> results() {
        return results;
    }

    boolean finished() {
        return finished;
    }

    void finish() {
        finished = true;
    }
}
