package dev.kiln.autoschedule.scheduler;

import java.util.concurrent.CompletableFuture;

/**
 * A round of a {@link SchedulableTask} whose programs are handed out ({@link SchedulableTask#startRound}) but not yet
 * applied: the scheduler with {@code overlapRounds} starts another task's round meanwhile and calls {@link #finish}
 * once the round is the oldest in flight.
 */
public interface StartedRound {

    /** Completes when the round's programs are measured (exceptionally if measuring failed). */
    CompletableFuture<?> measured();

    /**
     * Waits for the round, applies its results (log, cost model, best) and says what it measured; throws if measuring
     * failed. Called once.
     */
    RoundOutcome finish();

    /** A round that is already over (a synchronous task's). */
    static StartedRound done(RoundOutcome outcome) {
        return new StartedRound() {
            @Override
            public CompletableFuture<?> measured() {
                return CompletableFuture.completedFuture(outcome);
            }

            @Override
            public RoundOutcome finish() {
                return outcome;
            }
        };
    }
}
