package dev.kiln.autoschedule.model;

import dev.kiln.ir.KilnException;
import java.util.Arrays;

/**
 * A monotone map from a ranking model's raw scores to labels (normalised throughputs), fitted by
 * isotonic regression (pool-adjacent-violators) on the training programs: the knots are the mean
 * raw score and mean label of each pooled block, and a score between knots is interpolated
 * linearly. A tiny increasing term keeps the map strictly increasing (so it never turns two
 * differently scored programs into a tie, and the ranking stays exactly the model's), also past
 * the outermost knots. So the calibrated scores keep the model's order and read as throughputs:
 * the search's roulette selection weighs them as it weighs Ansor's, and R^2 against the labels
 * means something.
 */
final class Calibration {
    /** The weight of the tie-breaking term: far below any label difference the search cares about. */
    private static final double EPS = 1e-4;

    private final double[] knotScore;
    private final double[] knotLabel;

    private Calibration(double[] knotScore, double[] knotLabel) {
        this.knotScore = knotScore;
        this.knotLabel = knotLabel;
    }

    /** Fits the map on programs with these raw scores and labels (at least one). */
    static Calibration fit(double[] score, double[] label) {
        int n = score.length;
        Integer[] order = new Integer[n];
        for (int i = 0; i < n; i++) order[i] = i;
        Arrays.sort(order, (a, b) -> Double.compare(score[a], score[b]));
        double[] sumS = new double[n], sumL = new double[n];
        int[] count = new int[n];
        int blocks = 0;
        for (int k = 0; k < n; k++) {
            int i = order[k];
            sumS[blocks] = score[i];
            sumL[blocks] = label[i];
            count[blocks] = 1;
            blocks++;
            // Pool while the last block's mean label is not above the one before.
            while (blocks > 1 && sumL[blocks - 1] / count[blocks - 1] <= sumL[blocks - 2] / count[blocks - 2]) {
                sumS[blocks - 2] += sumS[blocks - 1];
                sumL[blocks - 2] += sumL[blocks - 1];
                count[blocks - 2] += count[blocks - 1];
                blocks--;
            }
        }
        double[] ks = new double[blocks], kl = new double[blocks];
        for (int b = 0; b < blocks; b++) {
            ks[b] = sumS[b] / count[b];
            kl[b] = sumL[b] / count[b];
        }
        return new Calibration(ks, kl);
    }

    /** The calibrated score of a raw score. */
    double apply(double s) {
        if (Double.isNaN(s) || s == Double.NEGATIVE_INFINITY) return s;
        double tie = EPS * (0.5 + Math.atan(s) / Math.PI);
        int n = knotScore.length;
        if (s <= knotScore[0]) return knotLabel[0] + tie;
        if (s >= knotScore[n - 1]) return knotLabel[n - 1] + tie;
        int hi = Arrays.binarySearch(knotScore, s);
        if (hi >= 0) return knotLabel[hi] + tie;
        hi = -hi - 1;
        int lo = hi - 1;
        double t = (s - knotScore[lo]) / (knotScore[hi] - knotScore[lo]);
        return knotLabel[lo] + t * (knotLabel[hi] - knotLabel[lo]) + tie;
    }

    /** Knots of the map (for tests). */
    int knots() {
        return knotScore.length;
    }

    /** The raw scores of the knots, increasing (a copy, to save the map). */
    double[] knotScores() {
        return knotScore.clone();
    }

    /** The labels of the knots (a copy, to save the map). */
    double[] knotLabels() {
        return knotLabel.clone();
    }

    /** A saved map; throws unless the scores do not decrease and match the labels in number. */
    static Calibration of(double[] knotScores, double[] knotLabels) {
        if (knotScores.length == 0 || knotScores.length != knotLabels.length) {
            throw new KilnException(
                    "calibration: " + knotScores.length + " knot scores and " + knotLabels.length + " labels");
        }
        for (int i = 1; i < knotScores.length; i++) {
            if (!(knotScores[i] >= knotScores[i - 1]))
                throw new KilnException("calibration: knot scores decrease at knot " + i);
        }
        return new Calibration(knotScores.clone(), knotLabels.clone());
    }
}
