package dev.kiln.autoschedule.network;

import dev.kiln.autoschedule.measure.CallTimer;
import dev.kiln.ir.KilnException;
import java.util.Arrays;
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
     * @param sleeps the parallel runtime's sleeps per whole run (NaN when not counted)
     * @param callMinima  the sum of each call's minimum, in the runs timed call by call
     * @param perCallMedians each call's median in those runs, in seconds, in call order
     */
    public record Row(String name, CallTimer.Stats times, double sleeps, double callMinima, double[] perCallMedians) {
        public Row {
            perCallMedians = perCallMedians.clone();
        }

        /**
         * The sum over the kernel calls of each call's median, added left to right as {@code callMinima} is (a plain
         * sum is monotone, so the minima's sum never exceeds it; {@code DoubleStream.sum}'s compensated one can).
         */
        public double callMedians() {
            double s = 0;
            for (double m : perCallMedians) s += m;
            return s;
        }

        @Override
        public double[] perCallMedians() {
            return perCallMedians.clone();
        }
    }

    public VariantComparison {
        rows = List.copyOf(rows);
    }

    /** How much faster variant {@code k} is than the first, by medians (above 1: faster). */
    public double speedup(int k) {
        return rows.getFirst().times().median() / rows.get(k).times().median();
    }

    /**
     * Two lines per variant: its whole runs (median, spread, sleeps per run, speed against the first by
     * medians and by minima), then the sums of its calls' medians and minima and their speeds against
     * the first's.
     */
    public String describe() {
        StringBuilder sb = new StringBuilder();
        Row ref = rows.getFirst();
        for (int k = 0; k < rows.size(); k++) {
            Row r = rows.get(k);
            sb.append(String.format(
                    Locale.ROOT,
                    "%s%n  whole runs %s, %.1f sleeps per run, %.3fx by medians, %.3fx by minima%n"
                            + "  call by call: sum of medians %.3f ms (%.3fx), sum of minima %.3f ms (%.3fx)%n",
                    r.name(),
                    r.times().describe(),
                    r.sleeps(),
                    speedup(k),
                    ref.times().min() / r.times().min(),
                    r.callMedians() * 1e3,
                    ref.callMedians() / r.callMedians(),
                    r.callMinima() * 1e3,
                    ref.callMinima() / r.callMinima()));
        }
        return sb.toString();
    }

    /**
     * The {@code top} kernel calls whose medians differ most between the first variant and variant {@code k}, one
     * line each: the call, its label ({@code labels}, one per call, as {@link CompiledNetwork#callLabels()}), both
     * medians and the first's over variant {@code k}'s (above 1: faster in variant {@code k}).
     */
    public String callDifferences(int k, List<String> labels, int top) {
        double[] a = rows.getFirst().perCallMedians(), b = rows.get(k).perCallMedians();
        if (labels.size() != a.length)
            throw new KilnException("call differences: " + labels.size() + " labels for " + a.length + " calls");
        Integer[] order = new Integer[a.length];
        for (int c = 0; c < a.length; c++) order[c] = c;
        Arrays.sort(order, (x, y) -> Double.compare(Math.abs(b[y] - a[y]), Math.abs(b[x] - a[x])));
        StringBuilder sb = new StringBuilder(
                String.format(Locale.ROOT, "%-5s %-44s %10s %10s %8s%n", "call", "kernel", "A ms", "B ms", "A/B"));
        for (int i = 0; i < Math.min(top, a.length); i++) {
            int c = order[i];
            String label = labels.get(c);
            if (label.length() > 44) label = label.substring(0, 43) + "~";
            sb.append(String.format(
                    Locale.ROOT, "%-5d %-44s %10.4f %10.4f %8.3f%n", c, label, a[c] * 1e3, b[c] * 1e3, a[c] / b[c]));
        }
        return sb.toString();
    }
}
