package dev.kiln.autoschedule.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kiln.ir.KilnException;
import java.util.Arrays;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** The pack-sum boosted trees on synthetic programs whose statements have known scores. */
class GbdtTest {
    static final int W = 6;
    static final GbdtParams SQUARED = GbdtParams.defaults().withObjective(Objective.SQUARED_ERROR);

    /** A statement's true score: a step, a slope and an interaction; features 4 and 5 are noise and a constant. */
    static double truth(float[] x, int o) {
        return 0.4 * (x[o] > 0.5 ? 1 : 0) + 0.3 * x[o + 1] + 0.2 * (x[o + 2] > 0.3 && x[o + 3] < 0.6 ? 1 : 0);
    }

    /** Programs of 1 to 4 statements; label = sum of the statements' true scores + noise. */
    static Gbdt.TrainingSet data(int programs, long seed, double noise) {
        SplittableRandom r = new SplittableRandom(seed);
        int[] start = new int[programs + 1];
        for (int q = 0; q < programs; q++) start[q + 1] = start[q] + 1 + r.nextInt(4);
        float[] x = new float[start[programs] * W];
        double[] y = new double[programs], w = new double[programs];
        for (int q = 0; q < programs; q++) {
            for (int row = start[q]; row < start[q + 1]; row++) {
                for (int f = 0; f < W - 1; f++) x[row * W + f] = (float) r.nextDouble();
                x[row * W + W - 1] = 7f;
                y[q] += truth(x, row * W);
            }
            y[q] += noise * r.nextGaussian();
            w[q] = 1;
        }
        return new Gbdt.TrainingSet(x, W, start, y, w);
    }

    static double[] predict(Gbdt m, Gbdt.TrainingSet d) {
        double[] p = new double[d.programs()];
        for (int q = 0; q < p.length; q++) {
            float[] rows = Arrays.copyOfRange(d.x(), d.start()[q] * W, d.start()[q + 1] * W);
            p[q] = m.predictProgram(rows, d.start()[q + 1] - d.start()[q]);
        }
        return p;
    }

    static double rmse(double[] p, double[] y) {
        double s = 0;
        for (int i = 0; i < p.length; i++) s += (p[i] - y[i]) * (p[i] - y[i]);
        return Math.sqrt(s / p.length);
    }

    @Test
    void learnsStatementScoresFromProgramSums() {
        Gbdt.TrainingSet train = data(1500, 1, 0.02), test = data(400, 2, 0);
        Gbdt m = Gbdt.train(train, SQUARED.withRounds(120).withMaxDepth(4));
        double[] p = predict(m, test);
        double mean = Arrays.stream(test.label()).average().orElseThrow();
        double spread = rmse(Arrays.stream(test.label()).map(v -> mean).toArray(), test.label());
        assertThat(rmse(p, test.label())).isLessThan(0.1 * spread);
        // Each statement's own score is recovered, though no statement was labelled alone.
        SplittableRandom r = new SplittableRandom(3);
        float[] one = new float[W];
        double err = 0;
        for (int k = 0; k < 200; k++) {
            for (int f = 0; f < W - 1; f++) one[f] = (float) r.nextDouble();
            one[W - 1] = 7f;
            err += Math.abs(m.predictRow(one, 0) - truth(one, 0));
        }
        assertThat(err / 200).isLessThan(0.06);
    }

    @Test
    void weightsDecideWhichProgramsAreFitted() {
        // Two programs with identical features but different labels: the heavier label wins.
        float[] x = {1, 2, 3, 1, 2, 3};
        double[] y = {1.0, 0.0};
        Gbdt heavyFirst = Gbdt.train(
                new Gbdt.TrainingSet(x, 3, new int[] {0, 1, 2}, y, new double[] {9, 1}), SQUARED.withRounds(200));
        Gbdt heavySecond = Gbdt.train(
                new Gbdt.TrainingSet(x, 3, new int[] {0, 1, 2}, y, new double[] {1, 9}), SQUARED.withRounds(200));
        assertThat(heavyFirst.predictRow(x, 0)).isCloseTo(0.9, org.assertj.core.api.Assertions.within(0.05));
        assertThat(heavySecond.predictRow(x, 0)).isCloseTo(0.1, org.assertj.core.api.Assertions.within(0.05));
    }

    @Test
    void rankingLossOrdersProgramsWithinEachGroup() {
        // Two groups (tasks) whose labels live on different scales: the ranking loss only compares
        // programs of one group, so each group is ordered well although a squared error would be
        // pulled by the offset.
        Gbdt.TrainingSet a = data(1200, 11, 0.02), b = data(1200, 12, 0.02);
        int na = a.programs(), nb = b.programs();
        int[] start = new int[na + nb + 1];
        for (int q = 0; q < na; q++) start[q + 1] = a.start()[q + 1];
        for (int q = 0; q < nb; q++) start[na + q + 1] = a.rows() + b.start()[q + 1];
        float[] x = new float[(a.rows() + b.rows()) * W];
        System.arraycopy(a.x(), 0, x, 0, a.x().length);
        System.arraycopy(b.x(), 0, x, a.x().length, b.x().length);
        double[] y = new double[na + nb], w = new double[na + nb];
        int[] group = new int[na + nb];
        for (int q = 0; q < na; q++) y[q] = a.label()[q];
        for (int q = 0; q < nb; q++) {
            y[na + q] = 10 + 0.1 * b.label()[q];
            group[na + q] = 1;
        }
        java.util.Arrays.fill(w, 1);
        Gbdt m = Gbdt.train(
                new Gbdt.TrainingSet(x, W, start, y, w, group),
                GbdtParams.defaults()
                        .withObjective(Objective.PAIRWISE_RANK_UNIFORM)
                        .withRounds(150)
                        .withMaxDepth(4));
        Gbdt.TrainingSet test = data(400, 13, 0);
        double[] p = predict(m, test);
        long ok = 0, all = 0;
        for (int i = 0; i < p.length; i++) {
            for (int j = i + 1; j < p.length; j++) {
                if (Math.abs(test.label()[i] - test.label()[j]) < 0.05) continue;
                all++;
                if ((p[i] > p[j]) == (test.label()[i] > test.label()[j])) ok++;
            }
        }
        assertThat((double) ok / all).isGreaterThan(0.93);
    }

    @Test
    void calibrationKeepsTheOrderAndReadsAsLabels() {
        SplittableRandom r = new SplittableRandom(4);
        double[] s = new double[500], y = new double[500];
        for (int i = 0; i < s.length; i++) {
            s[i] = r.nextGaussian() * 3;
            y[i] = 1 / (1 + Math.exp(-s[i])) + 0.05 * r.nextGaussian();
        }
        Calibration c = Calibration.fit(s, y);
        assertThat(c.knots()).isBetween(5, 499);
        double prev = Double.NEGATIVE_INFINITY;
        for (double v = -12; v <= 12; v += 0.01) {
            double out = c.apply(v);
            assertThat(out).isGreaterThan(prev);
            prev = out;
        }
        for (double v : new double[] {-2, 0, 1.5}) {
            assertThat(c.apply(v)).isCloseTo(1 / (1 + Math.exp(-v)), org.assertj.core.api.Assertions.within(0.06));
        }
        assertThat(c.apply(Double.NEGATIVE_INFINITY)).isEqualTo(Double.NEGATIVE_INFINITY);
    }

    @Test
    void deterministicAndThreadIndependent() {
        Gbdt.TrainingSet d = data(3000, 5, 0.05);
        GbdtParams p = GbdtParams.defaults().withRounds(10);
        double[] a = predict(Gbdt.train(d, p), d);
        double[] b = predict(Gbdt.train(d, p), d);
        double[] c = predict(Gbdt.train(d, p.withThreads(2)), d);
        assertThat(b).containsExactly(a);
        assertThat(c).containsExactly(a);
    }

    @Test
    void constantFeaturesNeverSplit() {
        Gbdt.TrainingSet d = data(300, 9, 0);
        FeatureBins fb = FeatureBins.of(d.x(), d.rows(), W, 64);
        assertThat(fb.active).containsExactly(0, 1, 2, 3, 4);
        assertThat(fb.bins(0)).isEqualTo(64);
        assertThat(fb.bin(0, -1f)).isZero();
        assertThat(fb.bin(0, 2f)).isEqualTo(63);
    }

    @Test
    void continuedBoostingOnWiderRowsKeepsTheBasePredictions() {
        Gbdt.TrainingSet wide = data(200, 5, 0.01);
        int narrowWidth = W - 1; // the set before its last feature was added to the layout
        float[] nx = new float[wide.rows() * narrowWidth];
        for (int row = 0; row < wide.rows(); row++)
            System.arraycopy(wide.x(), row * W, nx, row * narrowWidth, narrowWidth);
        Gbdt.TrainingSet narrow = new Gbdt.TrainingSet(nx, narrowWidth, wide.start(), wide.label(), wide.weight());
        Gbdt base = Gbdt.train(narrow, SQUARED);
        Gbdt more = Gbdt.train(wide, SQUARED, base);
        assertThat(more.width()).isEqualTo(W);
        assertThat(more.trees()).isEqualTo(2 * base.trees());
        // the base reads a wide row's first W - 1 numbers as the narrow row's: the same predictions
        double[] pb = new double[wide.programs()], pm = new double[wide.programs()];
        for (int q = 0; q < pb.length; q++) {
            int rows = wide.start()[q + 1] - wide.start()[q];
            pb[q] = base.predictProgram(wide.x(), wide.start()[q], rows, W);
            pm[q] = more.predictProgram(wide.x(), wide.start()[q], rows, W);
            assertThat(pb[q]).isEqualTo(base.predictProgram(nx, wide.start()[q], rows, narrowWidth));
        }
        assertThat(rmse(pm, wide.label())).isLessThan(rmse(pb, wide.label())); // the new trees fit what is left
        assertThatThrownBy(() -> Gbdt.train(narrow, SQUARED, more))
                .isInstanceOf(KilnException.class)
                .hasMessageContaining("reads 6 features per statement, the training set has only 5");
    }

    @Test
    void badInput() {
        assertThatThrownBy(() -> Gbdt.train(
                        new Gbdt.TrainingSet(new float[0], 3, new int[] {0}, new double[0], new double[0]),
                        GbdtParams.defaults()))
                .isInstanceOf(KilnException.class)
                .hasMessageContaining("nothing");
        assertThatThrownBy(() ->
                        new Gbdt.TrainingSet(new float[6], 3, new int[] {0, 1}, new double[] {1}, new double[] {1}))
                .isInstanceOf(KilnException.class)
                .hasMessageContaining("offsets");
        assertThatThrownBy(() -> GbdtParams.defaults().withMaxBins(300))
                .isInstanceOf(KilnException.class)
                .hasMessageContaining("maxBins");
    }
}
