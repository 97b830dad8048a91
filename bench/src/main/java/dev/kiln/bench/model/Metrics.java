package dev.kiln.bench.model;

import java.util.Arrays;
import java.util.Comparator;
import java.util.stream.IntStream;

/**
 * The cost model's quality measures of the Ansor paper, on programs with a predicted score and a
 * true throughput (higher is better for both).
 */
public final class Metrics {
    private Metrics() {}

    /** The share of pairs with different throughputs that the scores order the same way. */
    public static double pairwiseAccuracy(double[] score, double[] throughput) {
        long ok = 0, all = 0;
        for (int i = 0; i < score.length; i++) {
            for (int j = i + 1; j < score.length; j++) {
                if (throughput[i] == throughput[j]) continue;
                all++;
                if ((score[i] > score[j]) == (throughput[i] > throughput[j])) ok++;
            }
        }
        return all == 0 ? Double.NaN : (double) ok / all;
    }

    /** The share of the {@code k} fastest programs found among the {@code k} best scored. */
    public static double recallAt(int k, double[] score, double[] throughput) {
        int n = Math.min(k, score.length);
        Integer[] byScore = order(score), byTruth = order(throughput);
        java.util.Set<Integer> top =
                new java.util.HashSet<>(Arrays.asList(byTruth).subList(0, n));
        int hit = 0;
        for (int i = 0; i < n; i++) if (top.contains(byScore[i])) hit++;
        return (double) hit / n;
    }

    /** 1 - residual sum of squares / total sum of squares of {@code label}. */
    public static double r2(double[] prediction, double[] label) {
        double mean = Arrays.stream(label).average().orElse(0), res = 0, tot = 0;
        for (int i = 0; i < label.length; i++) {
            res += (label[i] - prediction[i]) * (label[i] - prediction[i]);
            tot += (label[i] - mean) * (label[i] - mean);
        }
        return 1 - res / tot;
    }

    /** Indices from the largest value down (ties by index). */
    public static Integer[] order(double[] v) {
        return IntStream.range(0, v.length)
                .boxed()
                .sorted(Comparator.comparingDouble((Integer i) -> -v[i]).thenComparing(i -> i))
                .toArray(Integer[]::new);
    }
}
