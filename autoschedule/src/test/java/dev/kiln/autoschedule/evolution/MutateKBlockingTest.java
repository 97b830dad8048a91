package dev.kiln.autoschedule.evolution;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kiln.autoschedule.Candidate;
import dev.kiln.autoschedule.SearchTask;
import dev.kiln.autoschedule.Workloads;
import dev.kiln.autoschedule.annotate.KBlocking;
import dev.kiln.autoschedule.feature.FeatureExtractor;
import dev.kiln.autoschedule.mutation.MutateKBlocking;
import dev.kiln.autoschedule.search.TargetRules;
import dev.kiln.schedule.Schedule;
import dev.kiln.te.ComputeDAG;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * {@link MutateKBlocking}: every child computes what the default lowering computes (through
 * {@link MutationRulesTest#children}: interpreter, seeded random inputs, float32 rtol and atol 1e-4),
 * differs from its parent in the K-blocking of exactly one stage, and the cost model's features see the
 * change; toggling twice gives the parent's program back (unblocking removes the reorder that blocked);
 * children round-trip through JSON and are the same for the same seed.
 */
class MutateKBlockingTest {

    static List<Boolean> blockings(Candidate c) {
        List<Boolean> out = new ArrayList<>();
        for (int id = 0; id < c.state().stages().size(); id++) out.add(KBlocking.isBlocked(c.state(), id));
        return out;
    }

    static void checkToggled(SearchTask task, Candidate p, Candidate c) {
        List<Boolean> a = blockings(p), b = blockings(c);
        assertThat(b).hasSameSizeAs(a);
        int changed = 0;
        for (int i = 0; i < a.size(); i++) if (!a.get(i).equals(b.get(i))) changed++;
        assertThat(changed).as(p.key() + "\n->\n" + c.key()).isEqualTo(1);
        FeatureExtractor fx = FeatureExtractor.of(task);
        assertThat(fx.extract(c)).as("features see the loop order").isNotEqualTo(fx.extract(p));
    }

    @Test
    void matmulChildrenToggleOneStage() {
        ComputeDAG dag = Workloads.matmul(32, 48, 64);
        SearchTask task = Workloads.task(dag);
        int made = MutationRulesTest.children(dag, new MutateKBlocking(), 40, (p, c) -> checkToggled(task, p, c));
        assertThat(made).isGreaterThan(6);
    }

    @Test
    void convChildrenToggleOneStage() {
        ComputeDAG dag = Workloads.conv2dNhwcRelu(1, 10, 10, 8, 16, 3);
        SearchTask task = Workloads.task(dag);
        int made = MutationRulesTest.children(dag, new MutateKBlocking(), 10, (p, c) -> checkToggled(task, p, c));
        assertThat(made).isGreaterThan(3);
    }

    @Test
    void togglingTwiceGivesTheParentBack() {
        ComputeDAG dag = Workloads.matmul(64, 64, 64);
        SearchTask task = Workloads.task(dag);
        int on = 0, off = 0;
        for (Candidate p : MutationRulesTest.parents(task, 30, 21)) {
            if (KBlocking.toggleable(p.state()).size() != 1) continue;
            Candidate c = new MutateKBlocking().apply(task, p, new SplittableRandom(1));
            assertThat(c).as(p.key()).isNotNull();
            Candidate back = new MutateKBlocking().apply(task, c, new SplittableRandom(2));
            assertThat(back).isNotNull();
            assertThat(back.key()).isEqualTo(p.key());
            boolean blockedParent = blockings(p).contains(true);
            if (blockedParent) {
                // unblocking the sampled program drops InitKBlocking's reorder (and the compute_at of A's copy)
                assertThat(c.schedule().steps())
                        .hasSizeLessThan(p.schedule().steps().size());
                off++;
            } else {
                // blocking appends a reorder (and moves A's copy), unblocking removes them again: the parent's steps
                assertThat(c.schedule().steps())
                        .hasSizeGreaterThan(p.schedule().steps().size());
                assertThat(back.schedule().steps()).isEqualTo(p.schedule().steps());
                on++;
            }
        }
        assertThat(on).isPositive();
        assertThat(off).isPositive();
    }

    @Test
    void childrenRoundTripThroughJsonAndAreReproducible() {
        ComputeDAG dag = Workloads.matmul(48, 64, 40);
        SearchTask task = Workloads.task(dag);
        int checked = 0;
        for (Candidate p : MutationRulesTest.parents(task, 30, 9)) {
            Candidate c = new MutateKBlocking().apply(task, p, new SplittableRandom(31));
            if (c == null) continue;
            Candidate again = new MutateKBlocking().apply(task, p, new SplittableRandom(31));
            assertThat(again.schedule().steps()).isEqualTo(c.schedule().steps());
            Schedule back = Schedule.fromJson(c.schedule().toJson(), dag);
            assertThat(back.steps()).isEqualTo(c.schedule().steps());
            assertThat(Candidate.of(back).key()).isEqualTo(c.key());
            checked++;
        }
        assertThat(checked).isGreaterThan(4);
    }

    @Test
    void noChildWithoutATiledReductionOrOnAGpu() {
        ComputeDAG softmax = Workloads.softmaxNm(16, 32);
        SearchTask task = Workloads.task(softmax);
        for (Candidate p : MutationRulesTest.parents(task, 6, 3)) {
            if (KBlocking.toggleable(p.state()).isEmpty())
                assertThat(new MutateKBlocking().apply(task, p, new SplittableRandom(1)))
                        .isNull();
        }
        ComputeDAG mm = Workloads.matmul(64, 48, 32);
        Candidate p = MutationRulesTest.parents(Workloads.task(mm), 1, 3).getFirst();
        assertThat(new MutateKBlocking().apply(GpuEvolutionTest.task(mm), p, new SplittableRandom(1)))
                .isNull();
        assertThat(TargetRules.ansorCpu().mutations()).noneMatch(m -> m.rule() instanceof MutateKBlocking);
    }
}
