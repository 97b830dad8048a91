package dev.kiln.autoschedule.network;

import dev.kiln.autoschedule.measure.CallTimer;
import java.util.List;
import java.util.Locale;

/**
 * A same-process comparison of ways to run one network ({@link CompiledNetwork#compare}): the runs of
 * the variants alternate, so a change in the machine's speed shifts all of them alike.
 *
 * @param rows one per variant, the first the reference of the ratios
 */
public record VariantComparison(List<Row> rows) {
    /**
     * @param name   the variant
     * @param times  its runs
     * @param sleeps the parallel runtime's sleeps per run (NaN when not counted)
     */
    public record Row(String name, CallTimer.Stats times, double sleeps) {}

    public VariantComparison {
        rows = List.copyOf(rows);
    }

    /** How much faster variant {@code k} is than the first, by medians (above 1: faster). */
    public double speedup(int k) {
        return rows.getFirst().times().median() / rows.get(k).times().median();
    }

    /** One line per variant: its runs, sleeps per run, and its speed against the first by medians and by minima. */
    public String describe() {
        StringBuilder sb = new StringBuilder();
        Row ref = rows.getFirst();
        for (int k = 0; k < rows.size(); k++) {
            Row r = rows.get(k);
            sb.append(String.format(
                    Locale.ROOT,
                    "%-40s %s, %.1f sleeps per run, %.3fx by medians, %.3fx by minima%n",
                    r.name(),
                    r.times().describe(),
                    r.sleeps(),
                    speedup(k),
                    ref.times().min() / r.times().min()));
        }
        return sb.toString();
    }
}
