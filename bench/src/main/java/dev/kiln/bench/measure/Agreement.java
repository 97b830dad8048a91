package dev.kiln.bench.measure;

import dev.kiln.bench.model.Metrics;
import dev.kiln.ir.KilnException;
import java.util.Arrays;

/**
 * How well k measurements of the same programs agree: {@code costs[run][program]} in seconds
 * (lower is faster). Every measure is averaged over the pairs of runs.
 *
 * @param pairwise   the share of program pairs (with different costs) that two runs order alike
 * @param spearman   Spearman's rank correlation between two runs
 * @param top5       the share of one run's 5 fastest programs among the other's 5 fastest
 * @param spreadP50  the median over programs of the relative spread max/min - 1 of its k costs
 * @param spreadP90  the 90th percentile of that spread
 */
public record Agreement(double pairwise, double spearman, double top5, double spreadP50, double spreadP90) {

    /** The agreement of {@code costs[run][program]} (at least 2 runs, the same programs in each). */
    public static Agreement of(double[][] costs) {
        if (costs.length < 2) throw new KilnException("agreement: needs at least 2 runs, got " + costs.length);
        int n = costs[0].length;
        for (double[] run : costs) {
            if (run.length != n)
                throw new KilnException("agreement: runs hold " + n + " and " + run.length + " programs");
        }
        double pw = 0, sp = 0, top = 0;
        int pairs = 0;
        for (int i = 0; i < costs.length; i++) {
            for (int j = i + 1; j < costs.length; j++) {
                double[] a = negate(costs[i]), b = negate(costs[j]);
                pw += Metrics.pairwiseAccuracy(a, b);
                sp += spearman(costs[i], costs[j]);
                top += Metrics.recallAt(5, a, b);
                pairs++;
            }
        }
        double[] spread = new double[n];
        for (int p = 0; p < n; p++) {
            double lo = Double.POSITIVE_INFINITY, hi = 0;
            for (double[] run : costs) {
                lo = Math.min(lo, run[p]);
                hi = Math.max(hi, run[p]);
            }
            spread[p] = lo > 0 ? hi / lo - 1 : 0;
        }
        return new Agreement(pw / pairs, sp / pairs, top / pairs, percentile(spread, 0.5), percentile(spread, 0.9));
    }

    /** Spearman's rank correlation (average ranks for ties). */
    public static double spearman(double[] x, double[] y) {
        double[] rx = ranks(x), ry = ranks(y);
        double mx = Arrays.stream(rx).average().orElse(0),
                my = Arrays.stream(ry).average().orElse(0);
        double sxy = 0, sxx = 0, syy = 0;
        for (int i = 0; i < x.length; i++) {
            sxy += (rx[i] - mx) * (ry[i] - my);
            sxx += (rx[i] - mx) * (rx[i] - mx);
            syy += (ry[i] - my) * (ry[i] - my);
        }
        return sxx == 0 || syy == 0 ? Double.NaN : sxy / Math.sqrt(sxx * syy);
    }

    /** Ranks from 1, ties sharing their average rank. */
    static double[] ranks(double[] v) {
        Integer[] idx = new Integer[v.length];
        for (int i = 0; i < idx.length; i++) idx[i] = i;
        Arrays.sort(idx, (a, b) -> Double.compare(v[a], v[b]));
        double[] r = new double[v.length];
        for (int i = 0; i < idx.length; ) {
            int j = i;
            while (j + 1 < idx.length && v[idx[j + 1]] == v[idx[i]]) j++;
            for (int k = i; k <= j; k++) r[idx[k]] = (i + j) / 2.0 + 1;
            i = j + 1;
        }
        return r;
    }

    /** The {@code q}-quantile (nearest rank) of {@code v}; NaN when empty. */
    public static double percentile(double[] v, double q) {
        if (v.length == 0) return Double.NaN;
        double[] s = v.clone();
        Arrays.sort(s);
        return s[(int) Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))];
    }

    private static double[] negate(double[] v) {
        return Arrays.stream(v).map(x -> -x).toArray();
    }
}
