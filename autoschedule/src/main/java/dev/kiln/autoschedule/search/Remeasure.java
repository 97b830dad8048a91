package dev.kiln.autoschedule.search;

import dev.kiln.autoschedule.Candidate;
import dev.kiln.autoschedule.measure.MeasureResult;
import java.util.List;
import java.util.function.Function;

/**
 * The re-measure of a search's fastest programs before it reports its best, so that one lucky
 * measurement does not win: each of the {@code top} cheapest programs is measured until it has
 * {@code 1 + rounds} measurements, one program at a time in turn (so a slow spell of the machine
 * falls on several programs, not all on one), and a program's cost becomes the median of its
 * measurements. When that changes which programs are the cheapest, the newcomers are re-measured
 * too, up to {@code 3 * top * rounds} measurements in all. A program whose re-measurement fails
 * is never the best.
 */
final class Remeasure {
    private Remeasure() {}

    /** Re-measures in {@code book} with {@code measure} (which also logs); returns the measurements made. */
    static int run(ProgramBook book, int top, int rounds, Function<Candidate, MeasureResult> measure) {
        if (top <= 0 || rounds <= 0) return 0;
        int cap = 3 * top * rounds, done = 0;
        while (done < cap) {
            List<ProgramBook.Entry> need = book.top(top).stream()
                    .filter(e -> e.measurements < 1 + rounds)
                    .toList();
            if (need.isEmpty()) break;
            for (ProgramBook.Entry e : need) {
                if (done >= cap) break;
                MeasureResult r = measure.apply(e.candidate);
                done++;
                book.add(e.candidate, r.ok(), r.ok() ? r.cost() : Double.POSITIVE_INFINITY, e.trial);
            }
        }
        return done;
    }
}
