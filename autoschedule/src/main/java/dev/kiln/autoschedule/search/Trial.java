package dev.kiln.autoschedule.search;

import dev.kiln.autoschedule.Candidate;
import dev.kiln.autoschedule.measure.MeasureResult;
import java.util.Objects;

/**
 * One measured program of a search: the candidate and what measuring it gave. What a
 * {@link SearchPolicy} learns from.
 *
 * @param candidate the program
 * @param result    its measurement (its times, or the error)
 */
public record Trial(Candidate candidate, MeasureResult result) {
    public Trial {
        Objects.requireNonNull(candidate, "candidate");
        Objects.requireNonNull(result, "result");
    }
}
