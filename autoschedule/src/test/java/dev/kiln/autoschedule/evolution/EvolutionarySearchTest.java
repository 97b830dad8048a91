package dev.kiln.autoschedule.evolution;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kiln.autoschedule.Candidate;
import dev.kiln.autoschedule.SearchTask;
import dev.kiln.autoschedule.Workloads;
import dev.kiln.autoschedule.log.TuningLog;
import dev.kiln.autoschedule.measure.MeasureResult;
import dev.kiln.autoschedule.model.CostModel;
import dev.kiln.autoschedule.model.GbdtCostModel;
import dev.kiln.autoschedule.model.RandomCostModel;
import dev.kiln.autoschedule.progress.TuneProgress;
import dev.kiln.autoschedule.search.FakeMeasurer;
import dev.kiln.autoschedule.search.SearchLimits;
import dev.kiln.autoschedule.search.SearchLoop;
import dev.kiln.autoschedule.search.SearchOutcome;
import dev.kiln.autoschedule.search.TargetRules;
import dev.kiln.ir.KilnException;
import dev.kiln.schedule.SplitStep;
import dev.kiln.schedule.Step;
import dev.kiln.target.Target;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.junit.jupiter.api.Test;

/** The genetic algorithm with a known objective, and the policy inside the tuning loop. */
class EvolutionarySearchTest {

    /** A model that likes long innermost tiles: the mean log2 of the last length of every split, over 6. */
    static final class InnerTileModel implements CostModel {
        @Override
        public String name() {
            return "inner-tile";
        }

        @Override
        public void update(SearchTask task, List<Candidate> candidates, List<MeasureResult> results) {}

        @Override
        public double[] predict(SearchTask task, List<Candidate> candidates) {
            double[] out = new double[candidates.size()];
            for (int i = 0; i < out.length; i++) out[i] = score(candidates.get(i));
            return out;
        }

        static double score(Candidate c) {
            double s = 0;
            int n = 0;
            for (Step st : c.schedule().steps()) {
                if (st instanceof SplitStep sp && sp.isConcrete()) {
                    s += Math.log(sp.lengths().getLast()) / Math.log(2) / 6;
                    n++;
                }
            }
            return n == 0 ? 0 : s / n;
        }
    }

    static final SearchTask TASK = Workloads.task(Workloads.matmul(64, 48, 40));

    static List<Candidate> start(int n) {
        return MutationRulesTest.parents(TASK, n, 21);
    }

    static double meanTop(List<Candidate> cs, int k) {
        return cs.stream()
                .mapToDouble(InnerTileModel::score)
                .sorted()
                .skip(Math.max(0, cs.size() - k))
                .average()
                .orElseThrow();
    }

    @Test
    void evolutionImprovesOnTheStartingPopulation() {
        EvolutionOptions o = EvolutionOptions.defaults().withPopulation(64).withThreads(1);
        EvolutionarySearch es = new EvolutionarySearch(TASK, new InnerTileModel(), o, null);
        List<Candidate> init = start(64);
        Set<String> excluded = Set.of(init.get(0).key(), init.get(1).key());
        List<Candidate> best = es.run(init, 16, excluded, new SplittableRandom(3));
        assertThat(best).hasSize(16);
        assertThat(best).noneMatch(c -> excluded.contains(c.key()));
        assertThat(best.stream().map(Candidate::key).distinct().count()).isEqualTo(16);
        for (int i = 1; i < best.size(); i++) {
            assertThat(InnerTileModel.score(best.get(i))).isLessThanOrEqualTo(InnerTileModel.score(best.get(i - 1)));
        }
        assertThat(meanTop(best, 10)).isGreaterThan(meanTop(init, 10) + 0.05);
        EvolutionarySearch.Stats st = es.stats();
        assertThat(st.mutations).isPositive();
        assertThat(st.crossovers).isPositive();
        assertThat(st.validCrossovers).isPositive();
        assertThat(st.validByRule.get("MutateTileSize")).isPositive();
        assertThat(st.validByRule.get("MutateRegisterTile")).isPositive();
    }

    @Test
    void sameResultWhateverTheThreads() {
        List<Candidate> init = start(48);
        EvolutionOptions o = EvolutionOptions.defaults().withPopulation(48).withGenerations(2);
        List<Candidate> one = new EvolutionarySearch(TASK, new InnerTileModel(), o.withThreads(1), null)
                .run(init, 20, Set.of(), new SplittableRandom(8));
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try {
            List<Candidate> two = new EvolutionarySearch(TASK, new InnerTileModel(), o.withThreads(2), pool)
                    .run(init, 20, Set.of(), new SplittableRandom(8));
            assertThat(two.stream().map(Candidate::key).toList())
                    .isEqualTo(one.stream().map(Candidate::key).toList());
        } finally {
            pool.shutdownNow();
        }
    }

    /**
     * The policy in the search loop: distinct new programs every round, the model learning, same run for the same seed.
     */
    @Test
    void policyDrivesTheSearchLoop() {
        List<String> first = null;
        for (int threads : new int[] {1, 2}) {
            FakeMeasurer m = new FakeMeasurer(Target.cpu(), 10, new java.util.concurrent.atomic.AtomicLong(), 0);
            GbdtCostModel model = new GbdtCostModel(
                    dev.kiln.autoschedule.model.GbdtParams.defaults().withRounds(8), 16, 0.05, 4, 1024);
            EvolutionOptions o = EvolutionOptions.defaults()
                    .withPopulation(48)
                    .withGenerations(2)
                    .withThreads(threads);
            try (EvolutionarySearchPolicy p =
                    new EvolutionarySearchPolicy(TASK, TargetRules.cpu().sketches(TASK), model, o, 7)) {
                SearchOutcome out = new SearchLoop(
                                TASK,
                                p,
                                m,
                                TuningLog.inMemory(),
                                new SearchLimits(60, 20, Duration.ZERO, 0),
                                TuneProgress.none())
                        .run();
                assertThat(out.trials()).isEqualTo(60);
                assertThat(new HashSet<>(m.measured())).hasSize(60);
                assertThat(model.trained()).isTrue();
                assertThat(model.samples()).isEqualTo(60);
                assertThat(p.rounds()).isEqualTo(3);
                assertThat(p.searchSeconds()).isPositive();
                if (first == null) first = m.measured();
                else assertThat(m.measured()).isEqualTo(first);
            }
        }
    }

    /**
     * A space of a handful of programs: each is measured once, then the policy finds nothing new and the loop stops.
     */
    @Test
    void smallSpaceIsExhausted() {
        SearchTask small = Workloads.task(Workloads.minNm(4, 6));
        FakeMeasurer m = new FakeMeasurer(Target.cpu());
        try (EvolutionarySearchPolicy p = new EvolutionarySearchPolicy(
                small,
                TargetRules.cpu().sketches(small),
                GbdtCostModel.defaults(1),
                EvolutionOptions.defaults().withPopulation(64).withThreads(1),
                1)) {
            SearchOutcome out = new SearchLoop(
                            small,
                            p,
                            m,
                            TuningLog.inMemory(),
                            new SearchLimits(1000, 16, Duration.ZERO, 0),
                            TuneProgress.none())
                    .run();
            assertThat(out.stopReason()).isEqualTo(dev.kiln.autoschedule.search.StopReason.SEARCH_SPACE_EXHAUSTED);
            assertThat(out.trials()).isBetween(2, 999);
            assertThat(new HashSet<>(m.measured())).hasSize(out.trials());
        }
    }

    @Test
    void randomModelLimitsGenerationsAndOptionsAreChecked() {
        EvolutionOptions o = EvolutionOptions.defaults().withPopulation(32).withThreads(1);
        EvolutionarySearch es = new EvolutionarySearch(TASK, new RandomCostModel(1), o, null);
        es.run(start(32), 8, Set.of(), new SplittableRandom(1));
        // two generations of at most 32 children each
        assertThat(es.stats().children).isLessThanOrEqualTo(2 * 32 * 5 / 2);
        assertThat(es.stats().scored).isLessThanOrEqualTo(3 * 32);
        assertThatThrownBy(() -> EvolutionOptions.defaults().withPopulation(1))
                .isInstanceOf(KilnException.class)
                .hasMessageContaining("population");
        assertThatThrownBy(() -> EvolutionOptions.defaults().withCrossoverProbability(1.5))
                .isInstanceOf(KilnException.class)
                .hasMessageContaining("crossoverProbability");
    }
}
