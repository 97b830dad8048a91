package dev.kiln.autoschedule.evolution;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kiln.autoschedule.Candidate;
import dev.kiln.autoschedule.SearchTask;
import dev.kiln.autoschedule.Workloads;
import dev.kiln.autoschedule.annotate.ReductionTileSizes;
import dev.kiln.autoschedule.mutation.MutateReductionTile;
import dev.kiln.schedule.SplitStep;
import dev.kiln.te.ComputeDAG;
import java.util.List;
import java.util.SplittableRandom;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/**
 * {@link MutateReductionTile}: every child computes what the default lowering computes (interpreter, seeded
 * random inputs, float32 rtol and atol 1e-4), differs from its parent only in reduction splits, and its block
 * (product of the innermost reduction tiles) is another one of 128-384; stages with a reduction under 256 have
 * nothing to move to.
 */
class MutateReductionTileTest {

    @Test
    void childrenMoveTheBlockAmong128To384() {
        ComputeDAG dag = Workloads.matmul(16, 32, 1024);
        SearchTask task = Workloads.task(dag);
        TreeSet<Long> seen = new TreeSet<>();
        int made = MutationRulesTest.children(dag, new MutateReductionTile(), 12, (p, c) -> {
            List<ReductionTileSizes.Group> pg =
                    ReductionTileSizes.groups(dag, p.schedule().steps());
            assertThat(pg).hasSize(1);
            ReductionTileSizes.Group g = pg.getFirst();
            long before = ReductionTileSizes.block(g, p.schedule().steps());
            long after = ReductionTileSizes.block(g, c.schedule().steps());
            assertThat(after).isIn(128L, 256L).isNotEqualTo(before);
            seen.add(after);
            // only the reduction split changed
            for (int i : MutationRulesTest.diff(p, c)) {
                assertThat(g.splitSteps()).contains(i);
                assertThat(c.schedule().steps().get(i)).isInstanceOf(SplitStep.class);
            }
        });
        assertThat(made).isEqualTo(12);
        assertThat(seen).containsExactly(128L, 256L);
    }

    @Test
    void convBlocksSpanSeveralReductionAxes() {
        ComputeDAG dag = Workloads.conv2dNhwcRelu(1, 6, 6, 32, 16, 3);
        int made = MutationRulesTest.children(dag, new MutateReductionTile(), 6, (p, c) -> {
            ReductionTileSizes.Group g =
                    ReductionTileSizes.groups(dag, c.schedule().steps()).getFirst();
            assertThat(g.extents()).containsExactlyInAnyOrder(32L, 3L, 3L);
            assertThat(ReductionTileSizes.block(g, c.schedule().steps())).isBetween(128L, 384L);
        });
        assertThat(made).isEqualTo(6);
    }

    @Test
    void smallReductionsHaveNoChild() {
        SearchTask small = Workloads.task(Workloads.matmul(32, 48, 64));
        for (Candidate p : MutationRulesTest.parents(small, 10, 3))
            assertThat(new MutateReductionTile().apply(small, p, new SplittableRandom(1)))
                    .isNull();
    }
}
