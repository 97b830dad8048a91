package dev.kiln.autoschedule.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kiln.autoschedule.Candidate;
import dev.kiln.autoschedule.SearchTask;
import dev.kiln.autoschedule.Workloads;
import dev.kiln.autoschedule.feature.FeatureExtractor;
import dev.kiln.autoschedule.feature.FeatureLayout;
import dev.kiln.autoschedule.feature.ProgramFeatures;
import dev.kiln.autoschedule.measure.MeasureError;
import dev.kiln.autoschedule.measure.MeasureResult;
import dev.kiln.autoschedule.search.TargetRules;
import dev.kiln.ir.KilnException;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * The learned model on sampled programs with synthetic times that depend on their structure
 * (vector length, parallel extent, lines touched), so that there is something to learn.
 */
class GbdtCostModelTest {

    /** A synthetic time: faster with longer vectors and more parallel iterations, slower with more lines. */
    static double seconds(ProgramFeatures f, double scale) {
        double s = 0;
        for (int r = 0; r < f.rows(); r++) {
            double vec = f.get(r, FeatureLayout.VECTORIZE + 2), par = f.get(r, FeatureLayout.PARALLEL + 1);
            double lines = f.get(r, FeatureLayout.buffer(0) + FeatureLayout.B_LINES);
            s += Math.pow(2, 0.3 * lines - 0.3 * vec - 0.2 * Math.min(par, 3));
        }
        return scale * s * 1e-6;
    }

    static List<MeasureResult> measure(SearchTask task, List<Candidate> cs, double scale, int failEvery) {
        FeatureExtractor fx = FeatureExtractor.of(task);
        List<MeasureResult> out = new ArrayList<>();
        for (int i = 0; i < cs.size(); i++) {
            if (failEvery > 0 && i % failEvery == 0) {
                out.add(MeasureResult.failed(MeasureError.RUNTIME, "synthetic failure", 0, 0));
            } else {
                double t = seconds(fx.extract(cs.get(i)), scale);
                out.add(MeasureResult.ok(new double[] {t}, 0, 0));
            }
        }
        return out;
    }

    static double pairwiseAccuracy(double[] pred, List<MeasureResult> truth) {
        int ok = 0, all = 0;
        for (int i = 0; i < pred.length; i++) {
            for (int j = i + 1; j < pred.length; j++) {
                double a = truth.get(i).median(), b = truth.get(j).median();
                if (a == b) continue;
                all++;
                if ((pred[i] > pred[j]) == (a < b)) ok++;
            }
        }
        return (double) ok / all;
    }

    static List<Candidate> sample(SearchTask task, int n, long seed) {
        return TargetRules.cpu()
                .population(task, TargetRules.cpu().sketches(task))
                .sample(n, new SplittableRandom(seed))
                .candidates();
    }

    @Test
    void ranksHeldOutProgramsAcrossTwoTasksOfDifferentSpeed() {
        SearchTask mm = Workloads.task(Workloads.matmul(48, 40, 36));
        SearchTask conv = Workloads.task(Workloads.conv2dNhwcRelu(1, 10, 10, 8, 16, 3));
        GbdtCostModel model = new GbdtCostModel(GbdtParams.defaults(), 32, 0.05, 1, 4096);
        List<Candidate> mmAll = sample(mm, 160, 11), convAll = sample(conv, 160, 12);
        // Before the warm-up the scores are random numbers in [0, 1).
        for (double v : model.predict(mm, mmAll.subList(0, 5))) assertThat(v).isBetween(0.0, 1.0);
        // The conv task runs 1000 times slower: labels are normalised per task, so both are learnt.
        model.update(mm, mmAll.subList(0, 120), measure(mm, mmAll.subList(0, 120), 1, 9));
        model.update(conv, convAll.subList(0, 120), measure(conv, convAll.subList(0, 120), 1000, 0));
        assertThat(model.trained()).isTrue();
        assertThat(model.samples()).isEqualTo(240);
        for (var t : List.of(java.util.Map.entry(mm, mmAll), java.util.Map.entry(conv, convAll))) {
            List<Candidate> held = t.getValue().subList(120, t.getValue().size());
            double acc = pairwiseAccuracy(model.predict(t.getKey(), held), measure(t.getKey(), held, 1, 0));
            assertThat(acc).as(t.getKey().workloadKey()).isGreaterThan(0.8);
        }
        assertThat(model.lastTrainSeconds()).isPositive();
        long hits = model.cache().hits();
        model.predict(mm, mmAll.subList(0, 10)); // measured programs: features come from the cache
        assertThat(model.cache().hits()).isEqualTo(hits + 10);
    }

    @Test
    void rankingScoresReadAsNormalisedThroughput() {
        // The default (ranking loss + calibration) and Ansor's model (squared error on Ansor's 164
        // features) both predict the normalised throughput of held-out programs.
        SearchTask mm = Workloads.task(Workloads.matmul(48, 40, 36));
        List<Candidate> all = sample(mm, 200, 21);
        List<Candidate> train = all.subList(0, 150), held = all.subList(150, all.size());
        List<MeasureResult> trainTimes = measure(mm, train, 1, 0), heldTimes = measure(mm, held, 1, 0);
        double best = trainTimes.stream().mapToDouble(r -> 1 / r.median()).max().orElseThrow();
        double[] label =
                heldTimes.stream().mapToDouble(r -> 1 / r.median() / best).toArray();
        for (GbdtCostModel model : List.of(GbdtCostModel.defaults(3), GbdtCostModel.ansor(3))) {
            model.update(mm, train, trainTimes);
            double[] p = model.predict(mm, held);
            double mean = java.util.Arrays.stream(label).average().orElseThrow(), res = 0, tot = 0;
            for (int i = 0; i < p.length; i++) {
                assertThat(p[i]).isBetween(-0.2, 1.2);
                res += (p[i] - label[i]) * (p[i] - label[i]);
                tot += (label[i] - mean) * (label[i] - mean);
            }
            assertThat(1 - res / tot).as("R^2").isGreaterThan(0.5);
            assertThat(pairwiseAccuracy(p, heldTimes)).isGreaterThan(0.8);
        }
        assertThatThrownBy(() -> new GbdtCostModel(GbdtParams.defaults(), 1, 1, 1, 10, FeatureLayout.LENGTH + 1))
                .isInstanceOf(KilnException.class)
                .hasMessageContaining("features");
    }

    @Test
    void randomModelAndMisuse() {
        SearchTask mm = Workloads.task(Workloads.matmul(16, 16, 16));
        List<Candidate> cs = sample(mm, 10, 3);
        RandomCostModel r = new RandomCostModel(5);
        assertThat(r.isRandom()).isTrue();
        double[] a = r.predict(mm, cs), b = new RandomCostModel(5).predict(mm, cs);
        assertThat(a).containsExactly(b);
        for (double v : a) assertThat(v).isBetween(0.0, 1.0);
        assertThatThrownBy(() -> GbdtCostModel.defaults(1).update(mm, cs, List.of()))
                .isInstanceOf(KilnException.class)
                .hasMessageContaining("10 programs but 0 results");
        assertThatThrownBy(() -> new GbdtCostModel(GbdtParams.defaults(), 0, 0.05, 1, 10))
                .isInstanceOf(KilnException.class)
                .hasMessageContaining("warmupPrograms");
    }
}
