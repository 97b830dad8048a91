package dev.kiln.autoschedule.annotate;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kiln.autoschedule.Candidate;
import dev.kiln.autoschedule.SearchTask;
import dev.kiln.autoschedule.Workloads;
import dev.kiln.autoschedule.search.TargetRules;
import dev.kiln.schedule.Step;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** Same seed, same samples; another seed, other samples. */
class DeterminismTest {

    private static List<List<Step>> sample(dev.kiln.te.ComputeDAG dag, long seed) {
        SearchTask task = Workloads.task(dag);
        return TargetRules.cpu()
                .population(task, TargetRules.cpu().sketches(task))
                .sample(40, new SplittableRandom(seed))
                .candidates()
                .stream()
                .map(c -> c.schedule().steps())
                .toList();
    }

    @Test
    void theSameSeedGivesTheSameSchedules() {
        for (var dag : List.of(
                Workloads.matmul(6, 8, 48), Workloads.softmaxNm(3, 20), Workloads.conv2dNhwcRelu(1, 5, 5, 4, 4, 3))) {
            List<List<Step>> a = sample(dag, 42), b = sample(dag, 42), c = sample(dag, 43);
            assertThat(a).isEqualTo(b);
            assertThat(a).isNotEqualTo(c);
        }
    }

    @Test
    void eachDrawDependsOnlyOnItsOwnGenerator() {
        SearchTask task = Workloads.task(Workloads.layerNorm(4, 10));
        InitPopulation pop =
                TargetRules.cpu().population(task, TargetRules.cpu().sketches(task));
        Candidate x = pop.draw(new SplittableRandom(7));
        pop.draw(new SplittableRandom(8));
        Candidate y = pop.draw(new SplittableRandom(7));
        assertThat(y.schedule()).isEqualTo(x.schedule());
        assertThat(y.key()).isEqualTo(x.key());
    }
}
