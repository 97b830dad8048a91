package dev.kiln.autoschedule.evolution;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kiln.autoschedule.Candidate;
import dev.kiln.autoschedule.SearchTask;
import dev.kiln.autoschedule.Workloads;
import dev.kiln.autoschedule.measure.MeasureResult;
import dev.kiln.autoschedule.model.CostModel;
import dev.kiln.autoschedule.search.TargetRules;
import dev.kiln.ir.KilnException;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import org.junit.jupiter.api.Test;

/**
 * {@link TileNiches}: the reordering caps one niche among the first picks only while others are left and keeps the
 * ranking's order otherwise; a signature names each register tile; and a policy whose model favours one register
 * tile measures several shapes in a batch with the cap, one shape without it.
 */
class TileNichesTest {
    @Test
    void orderCapsOneNicheWhileOthersAreLeft() {
        List<String> ranked = List.of("a1", "a2", "a3", "a4", "b1", "a5", "c1", "b2");
        Function<String, String> niche = s -> s.substring(0, 1);
        // 4 picks, at most 2 of a niche: a1 a2, then b1 c1 before a3
        assertThat(TileNiches.order(ranked, niche, 4, 2))
                .containsExactly("a1", "a2", "b1", "c1", "a3", "a4", "a5", "b2");
        // the cap binds only among the picks: with 6 picks the third niche's second entry gets in too
        assertThat(TileNiches.order(ranked, niche, 6, 2))
                .containsExactly("a1", "a2", "b1", "c1", "b2", "a3", "a4", "a5");
        // one niche alone, or a cap of all the picks, leaves the ranking as it is
        assertThat(TileNiches.order(List.of("a1", "a2", "a3"), niche, 2, 1)).containsExactly("a1", "a2", "a3");
        assertThat(TileNiches.order(ranked, niche, 4, 4)).isEqualTo(ranked);
        assertThat(TileNiches.cap(61, 0.25)).isEqualTo(16);
        assertThat(TileNiches.cap(3, 0.01)).isEqualTo(1);
        assertThat(TileNiches.cap(3, 1)).isEqualTo(3);
        assertThatThrownBy(() -> TileNiches.order(ranked, niche, 4, 0)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> EvolutionOptions.defaults().withTileShare(0))
                .isInstanceOf(KilnException.class)
                .hasMessageContaining("tileShare");
    }

    /** Scores a program by its register tile: one shape, chosen by the first program seen, far above the rest. */
    static final class OneTileModel implements CostModel {
        final Map<String, Double> bias = new HashMap<>();
        String favourite;

        @Override
        public String name() {
            return "one-tile";
        }

        @Override
        public void update(SearchTask task, List<Candidate> candidates, List<MeasureResult> results) {}

        @Override
        public double[] predict(SearchTask task, List<Candidate> candidates) {
            double[] out = new double[candidates.size()];
            for (int i = 0; i < out.length; i++) {
                String sig = TileNiches.signature(
                        task.dag(), candidates.get(i).schedule().steps());
                if (favourite == null && !sig.isEmpty()) favourite = sig;
                out[i] = (sig.equals(favourite) ? 10 : 0)
                        + (candidates.get(i).key().hashCode() & 0xff) / 256.0;
            }
            return out;
        }
    }

    private static Set<String> shapesOfOneBatch(SearchTask task, double share) {
        OneTileModel model = new OneTileModel();
        EvolutionOptions o =
                EvolutionOptions.defaults().withPopulation(128).withThreads(1).withTileShare(share);
        try (EvolutionarySearchPolicy p =
                new EvolutionarySearchPolicy(task, TargetRules.cpu().sketches(task), model, o, 11)) {
            List<Candidate> batch = p.nextBatch(16, Set.of());
            assertThat(batch).hasSize(16);
            Map<String, Integer> count = new HashMap<>();
            for (Candidate c : batch)
                count.merge(TileNiches.signature(task.dag(), c.schedule().steps()), 1, Integer::sum);
            if (share < 1) {
                // 16 picks, eps-greedy takes none of 16 (floor(0.05 * 16) = 0): at most 4 of the favourite
                assertThat(count.getOrDefault(model.favourite, 0)).isLessThanOrEqualTo(4);
            }
            return new HashSet<>(count.keySet());
        }
    }

    @Test
    void aModelThatFavoursOneTileStillGetsSeveralMeasured() {
        SearchTask task = Workloads.task(Workloads.matmul(256, 256, 256));
        Set<String> capped = shapesOfOneBatch(task, 0.25);
        Set<String> uncapped = shapesOfOneBatch(task, 1);
        assertThat(capped.size()).isGreaterThanOrEqualTo(4);
        assertThat(uncapped.size()).isLessThan(capped.size());
        assertThat(capped).allMatch(s -> s.isEmpty() || s.matches("[\\w.]+:\\d+(x\\d+)+(;[\\w.]+:\\d+(x\\d+)+)*"));
    }
}
