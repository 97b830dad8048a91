package dev.kiln.autoschedule.model;

import static dev.kiln.autoschedule.model.GbdtCostModelTest.measure;
import static dev.kiln.autoschedule.model.GbdtCostModelTest.pairwiseAccuracy;
import static dev.kiln.autoschedule.model.GbdtCostModelTest.sample;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kiln.autoschedule.Candidate;
import dev.kiln.autoschedule.SearchTask;
import dev.kiln.autoschedule.Workloads;
import dev.kiln.autoschedule.feature.FeatureExtractor;
import dev.kiln.autoschedule.feature.FeatureLayout;
import dev.kiln.autoschedule.feature.ProgramFeatures;
import dev.kiln.autoschedule.log.LogRecord;
import dev.kiln.autoschedule.log.TuningLog;
import dev.kiln.autoschedule.measure.MeasureResult;
import dev.kiln.ir.KilnException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A model pretrained on the programs of some tasks ranks the programs of a task it has never
 * seen (the synthetic times of {@link GbdtCostModelTest} depend on the programs' structure the
 * same way in every task); it saves and loads exactly; a cost model that starts from it is warm
 * before its own warm-up and keeps learning on top of it.
 */
class PretrainedModelTest {

    static PretrainingSet set(List<SearchTask> tasks, int perTask, long seed) {
        PretrainingSet s = new PretrainingSet();
        for (SearchTask t : tasks) {
            List<Candidate> cs = sample(t, perTask, seed + t.workloadKey().hashCode());
            List<MeasureResult> rs = measure(t, cs, 1 + Math.abs(t.workloadKey().hashCode() % 100), 0);
            for (int i = 0; i < cs.size(); i++)
                s.add(t, cs.get(i), 1 / rs.get(i).median());
        }
        return s;
    }

    static final List<SearchTask> TRAIN = List.of(
            Workloads.task(Workloads.matmul(48, 40, 36)),
            Workloads.task(Workloads.matmul(64, 24, 80)),
            Workloads.task(Workloads.conv2dNhwcRelu(1, 10, 10, 8, 16, 3)));
    static final SearchTask HELD_OUT = Workloads.task(Workloads.matmul(56, 72, 32));

    @Test
    void ranksATaskItWasNotTrainedOn() {
        PretrainingSet s = set(TRAIN, 120, 1);
        assertThat(s.size()).isEqualTo(360);
        assertThat(s.perTask()).hasSize(3);
        PretrainedModel pm = PretrainedModel.train(s, GbdtParams.defaults(), "three synthetic tasks");
        assertThat(pm.programs()).isEqualTo(360);
        assertThat(pm.tasks()).hasSize(3);
        List<Candidate> held = sample(HELD_OUT, 120, 99);
        List<MeasureResult> truth = measure(HELD_OUT, held, 7, 0);
        FeatureExtractor fx = FeatureExtractor.of(HELD_OUT);
        double[] p = held.stream().mapToDouble(c -> pm.score(fx.extract(c))).toArray();
        assertThat(pairwiseAccuracy(p, truth)).isGreaterThan(0.8);
        // the report of a held-out set: the same ranking, and a search over its programs in the model's order
        List<PretrainingSet.Ranking> ranks = set(List.of(HELD_OUT), 120, 99).rank(pm);
        assertThat(ranks).singleElement().satisfies(r -> {
            assertThat(r.programs()).isEqualTo(120);
            assertThat(r.pairwiseAccuracy()).isGreaterThan(0.8);
            assertThat(r.firstPick()).isGreaterThan(r.randomPick()).isLessThanOrEqualTo(1.0);
            assertThat(r.picksTo95()).isBetween(1, 120);
            assertThat((double) r.picksTo95()).isLessThan(r.randomPicksTo95());
        });
        // the online model starting from it is warm before its warm-up, and random without it
        GbdtCostModel plain = GbdtCostModel.defaults(5),
                warm = GbdtCostModel.defaults(5).withPretrained(pm);
        assertThat(plain.isRandom()).isTrue();
        assertThat(warm.isRandom()).isFalse();
        assertThat(warm.name()).isEqualTo("gbdt+pretrained");
        assertThat(pairwiseAccuracy(warm.predict(HELD_OUT, held), truth)).isGreaterThan(0.8);
        assertThat(pairwiseAccuracy(plain.predict(HELD_OUT, held), truth)).isBetween(0.35, 0.65);
        // after its own measurements it boosts on top of the pretrained trees
        List<Candidate> own = sample(HELD_OUT, 48, 7);
        warm.update(HELD_OUT, own, measure(HELD_OUT, own, 7, 0));
        assertThat(warm.trained()).isTrue();
        assertThat(pairwiseAccuracy(warm.predict(HELD_OUT, held), truth)).isGreaterThan(0.8);
    }

    @Test
    void continuedBoostingKeepsTheBaseTrees() {
        PretrainingSet s = set(TRAIN.subList(0, 1), 80, 3);
        Gbdt.TrainingSet d = s.trainingSet(FeatureLayout.LENGTH, 1.0);
        GbdtParams p = GbdtParams.defaults();
        Gbdt base = Gbdt.train(d, p);
        Gbdt more = Gbdt.train(d, p, base);
        assertThat(more.trees()).isEqualTo(2 * base.trees());
        Gbdt restored = Gbdt.of(base.saved());
        for (int q = 0; q < d.programs(); q++) {
            int rows = d.start()[q + 1] - d.start()[q];
            assertThat(restored.predictProgram(d.x(), d.start()[q], rows, d.width()))
                    .isEqualTo(base.predictProgram(d.x(), d.start()[q], rows, d.width()));
        }
        assertThatThrownBy(() -> new PretrainingSet().trainingSet(4, 1.0))
                .isInstanceOf(KilnException.class)
                .hasMessageContaining("no programs");
        Gbdt.Nodes bad = base.saved();
        bad.left()[bad.roots()[0]] = 0;
        assertThatThrownBy(() -> Gbdt.of(bad)).isInstanceOf(KilnException.class).hasMessageContaining("children");
    }

    @Test
    void aModelBoostedOnNewTasksKeepsItsBaseAndLearnsTheirs() {
        // the base saw only the conv; the new records are the two matmuls
        PretrainedModel base = PretrainedModel.train(set(TRAIN.subList(2, 3), 80, 11), GbdtParams.defaults(), "conv");
        PretrainingSet more = set(TRAIN.subList(0, 2), 120, 12);
        PretrainedModel boosted = PretrainedModel.train(more, GbdtParams.defaults(), "conv, then matmuls", base);
        assertThat(boosted.trees().trees()).isEqualTo(2 * base.trees().trees());
        assertThat(boosted.tasks())
                .containsExactlyInAnyOrderElementsOf(
                        TRAIN.stream().map(SearchTask::workloadKey).toList());
        assertThat(boosted.programs()).isEqualTo(80 + 240);
        // it ranks a held-out matmul at least as well as a model of the matmuls alone
        PretrainedModel alone = PretrainedModel.train(more, GbdtParams.defaults(), "matmuls");
        List<Candidate> held = sample(HELD_OUT, 120, 13);
        List<MeasureResult> truth = measure(HELD_OUT, held, 7, 0);
        FeatureExtractor fx = FeatureExtractor.of(HELD_OUT);
        double boostedAcc = pairwiseAccuracy(
                held.stream().mapToDouble(c -> boosted.score(fx.extract(c))).toArray(), truth);
        double aloneAcc = pairwiseAccuracy(
                held.stream().mapToDouble(c -> alone.score(fx.extract(c))).toArray(), truth);
        assertThat(boostedAcc).isGreaterThan(0.8).isGreaterThanOrEqualTo(aloneAcc - 0.02);
    }

    @Test
    void savesAndLoadsExactly(@TempDir Path dir) throws Exception {
        PretrainedModel pm = PretrainedModel.train(set(TRAIN.subList(0, 2), 60, 5), GbdtParams.defaults(), "two tasks");
        List<Candidate> held = sample(HELD_OUT, 30, 4);
        FeatureExtractor fx = FeatureExtractor.of(HELD_OUT);
        for (String name : List.of("m.json", "m.json.gz")) {
            Path f = dir.resolve(name);
            pm.save(f);
            PretrainedModel back = PretrainedModel.load(f);
            assertThat(back.description()).isEqualTo("two tasks");
            assertThat(back.tasks()).isEqualTo(pm.tasks());
            for (Candidate c : held) {
                ProgramFeatures features = fx.extract(c);
                assertThat(back.score(features)).isEqualTo(pm.score(features));
            }
        }
        Path other = dir.resolve("other.json");
        Files.writeString(
                other, Files.readString(dir.resolve("m.json")).replace(PretrainedModel.FORMAT, "kiln-pretrained-0"));
        assertThatThrownBy(() -> PretrainedModel.load(other))
                .isInstanceOf(KilnException.class)
                .hasMessageContaining(other.toString())
                .hasMessageContaining("kiln-pretrained-0");
        Files.writeString(other, "{");
        assertThatThrownBy(() -> PretrainedModel.load(other))
                .isInstanceOf(KilnException.class)
                .hasMessageContaining("not valid JSON");
        assertThatThrownBy(() -> PretrainedModel.load(dir.resolve("none.json")))
                .isInstanceOf(KilnException.class)
                .hasMessageContaining("does not exist");
    }

    @Test
    void theShippedModelLoadsAndScores() {
        PretrainedModel pm = PretrainedModel.bundled().orElseThrow();
        assertThat(pm.programs()).isGreaterThan(1000);
        assertThat(pm.description()).contains("tuning records");
        FeatureExtractor fx = FeatureExtractor.of(HELD_OUT);
        for (Candidate c : sample(HELD_OUT, 5, 2))
            assertThat(pm.score(fx.extract(c))).isFinite();
    }

    @Test
    void theShippedModelLearnsOnlineFromTodaysFeatures() {
        // the shipped model reads the features of its day (189 per statement); today's programs have more (190):
        // the search's online update boosts on top of it, and the new trees may read the added feature
        PretrainedModel pm = PretrainedModel.bundled().orElseThrow();
        GbdtCostModel m = GbdtCostModel.defaults(3).withPretrained(pm);
        List<Candidate> cs = sample(HELD_OUT, 40, 11);
        m.update(HELD_OUT, cs, measure(HELD_OUT, cs, 1, 7));
        for (double score : m.predict(HELD_OUT, sample(HELD_OUT, 6, 12)))
            assertThat(score).isFinite();
    }

    @Test
    void readsTuningLogsOfKnownTasks(@TempDir Path dir) {
        SearchTask mm = TRAIN.get(0);
        List<Candidate> cs = sample(mm, 12, 8);
        List<MeasureResult> rs = measure(mm, cs, 1, 4);
        Path log = dir.resolve("t.jsonl");
        try (TuningLog l = TuningLog.open(log)) {
            for (int i = 0; i < cs.size(); i++)
                l.append(LogRecord.of(mm, cs.get(i).schedule(), rs.get(i)));
            l.append(LogRecord.of(HELD_OUT, sample(HELD_OUT, 1, 1).getFirst().schedule(), rs.get(1)));
        }
        PretrainingSet s = new PretrainingSet();
        assertThat(s.addLogs(log, Map.of(mm.workloadKey(), mm), t -> true)).isEqualTo(12);
        assertThat(s.unmatched()).isEqualTo(1);
        assertThat(s.perTask()).containsValue(12);
        // failed measurements are programs of throughput 0: label 0
        Gbdt.TrainingSet d = s.trainingSet(FeatureLayout.LENGTH, 1.0);
        assertThat(d.label()).contains(0.0, 1.0);
    }
}
