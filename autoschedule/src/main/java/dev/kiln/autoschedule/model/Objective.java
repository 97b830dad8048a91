package dev.kiln.autoschedule.model;

import java.util.SplittableRandom;

/**
 * What the boosted trees ({@link Gbdt}) minimise, as gradients and hessians of each program's
 * score (the sum of its statements' scores). Every statement of a program then gets its program's
 * gradient and hessian (Ansor's pack-sum).
 *
 * <ul>
 *   <li>{@link #SQUARED_ERROR}: Ansor's loss, the weighted squared error of the score against the
 *       label: gradient {@code w (score - label)}, hessian {@code w}.</li>
 *   <li>{@link #PAIRWISE_RANK}: a pairwise logistic (RankNet) loss inside each group (a task): for
 *       programs {@code i} faster than {@code j}, {@code log(1 + exp(-(s_i - s_j)))}, each pair
 *       weighted by the difference of the two labels, so that ordering the fast programs right
 *       matters most (what the search needs: the top of the ranking), as LambdaRank weighs pairs by
 *       their effect on the top. Each program is paired with {@code pairsPerProgram} random
 *       partners of its group per boosting round (as XGBoost's rank:pairwise samples pairs), so a
 *       round costs time linear in the programs. The raw scores order programs; they are not
 *       throughputs ({@link GbdtCostModel} maps them onto the labels with a monotone
 *       {@link Calibration}). Kiln's default.</li>
 *   <li>{@link #PAIRWISE_RANK_UNIFORM}: the same loss with every pair weighted alike (an
 *       ablation: slightly better pairwise accuracy over all programs, less attention to the
 *       fastest).</li>
 * </ul>
 */
public enum Objective {
    SQUARED_ERROR,
    PAIRWISE_RANK,
    PAIRWISE_RANK_UNIFORM;

    /** The least hessian a program gets under the ranking loss (a program with no informative pair). */
    static final double MIN_HESSIAN = 1e-6;

    /**
     * Fills {@code grad} and {@code hess} per program from the current program scores
     * {@code score}. {@code groupStart}/{@code groupMembers} list the programs of each group
     * (only read by the ranking loss); {@code rng} draws the pairs.
     */
    void gradients(
            double[] score,
            Gbdt.TrainingSet d,
            int[] groupStart,
            int[] groupMembers,
            int pairsPerProgram,
            SplittableRandom rng,
            double[] grad,
            double[] hess) {
        double[] label = d.label(), weight = d.weight();
        switch (this) {
            case SQUARED_ERROR -> {
                for (int q = 0; q < score.length; q++) {
                    grad[q] = weight[q] * (score[q] - label[q]);
                    hess[q] = weight[q];
                }
            }
            case PAIRWISE_RANK, PAIRWISE_RANK_UNIFORM -> {
                java.util.Arrays.fill(grad, 0);
                java.util.Arrays.fill(hess, 0);
                for (int g = 0; g + 1 < groupStart.length; g++) {
                    int from = groupStart[g], size = groupStart[g + 1] - from;
                    if (size < 2) continue;
                    for (int a = 0; a < size; a++) {
                        int i = groupMembers[from + a];
                        for (int k = 0; k < pairsPerProgram; k++) {
                            int j = groupMembers[from + rng.nextInt(size)];
                            double li = label[i], lj = label[j];
                            if (li == lj) continue;
                            int hi = li > lj ? i : j, lo = li > lj ? j : i;
                            double w = (this == PAIRWISE_RANK ? Math.abs(li - lj) : 1) * 0.5 * (weight[i] + weight[j]);
                            double rho = 1 / (1 + Math.exp(score[hi] - score[lo]));
                            grad[hi] -= w * rho;
                            grad[lo] += w * rho;
                            double h = w * rho * (1 - rho);
                            hess[hi] += h;
                            hess[lo] += h;
                        }
                    }
                }
                for (int q = 0; q < hess.length; q++) hess[q] = Math.max(hess[q], MIN_HESSIAN);
            }
        }
    }
}
