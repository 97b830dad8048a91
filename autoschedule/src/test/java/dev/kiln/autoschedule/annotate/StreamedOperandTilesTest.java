package dev.kiln.autoschedule.annotate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kiln.autoschedule.Candidate;
import dev.kiln.autoschedule.SearchTask;
import dev.kiln.autoschedule.Workloads;
import dev.kiln.autoschedule.search.TargetRules;
import dev.kiln.autoschedule.sketch.Sketch;
import dev.kiln.ir.KilnException;
import dev.kiln.lower.LowerDefault;
import dev.kiln.lower.Lowering;
import dev.kiln.runtime.Comparison;
import dev.kiln.runtime.NDArray;
import dev.kiln.schedule.Iter;
import dev.kiln.schedule.Stage;
import dev.kiln.te.ComputeDAG;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * {@link StreamedOperandTiles} and its draw in {@link InitFillTileSize}: a conv whose weights dwarf its activations
 * (a ResNet layer-4 shape, scaled down) has groups over the batch, row and column splits, never the channel split;
 * a conv with small weights and a square matmul have none. With probability 1 every sample of such a conv has its
 * level-1 row, column and batch tiles at 1 and computes what the default lowering computes (interpreter, seeded
 * random inputs, float32 rtol and atol 1e-4); with probability 0 some sample streams the weights per row.
 */
class StreamedOperandTilesTest {
    static final FactorizationMemo MEMO = new FactorizationMemo();

    /** 4x4 output, 64 -> 64 channels, 3x3 kernel: 36 864 weights against 1 024 inputs (padded to 2 304). */
    static ComputeDAG deepConv() {
        return Workloads.conv2dNhwcRelu(1, 4, 4, 64, 64, 3);
    }

    @Test
    void aConvDominatedByItsWeightsHasTheSpatialSplitsTheWeightsDoNotIndex() {
        SearchTask task = Workloads.task(deepConv());
        List<Sketch> sketches = TargetRules.cpu().sketches(task);
        int withGroups = 0;
        for (Sketch s : sketches) {
            List<StreamedOperandTiles.Group> gs = StreamedOperandTiles.groups(task.dag(), s);
            if (gs.isEmpty()) continue;
            withGroups++;
            for (StreamedOperandTiles.Group g : gs) {
                assertThat(g.operand()).isEqualTo("weight");
                // i, j, k (batch, rows, columns) but not l (the output channels the weights are indexed by)
                assertThat(g.splitSteps()).hasSize(3);
            }
        }
        assertThat(withGroups).as("multi-level-tiled sketches").isPositive();
        // small weights (3x3x4x8) against 12x12x4 activations; a square matmul: no operand dominates
        for (ComputeDAG dag : List.of(Workloads.conv2dNhwcRelu(1, 12, 12, 4, 8, 3), Workloads.matmul(64, 64, 64))) {
            SearchTask t = Workloads.task(dag);
            for (Sketch s : TargetRules.cpu().sketches(t))
                assertThat(StreamedOperandTiles.groups(t.dag(), s)).isEmpty();
        }
    }

    static InitPopulation sampler(SearchTask task, double p) {
        TargetRules cpu = TargetRules.cpu();
        return new InitPopulation(
                task,
                cpu.sketches(task),
                cpu.initRules(),
                new InitFillTileSize(MEMO, 0.5, 0.25, 0.5, p),
                InitPopulation.DEFAULT_MAX_FRUITLESS_DRAWS);
    }

    /** Whether every level-1 loop of the tiled conv over a batch, row or column axis has extent 1. */
    static boolean weightsStayInsideTheReductionBlock(Candidate c) {
        for (Stage st : c.state().stages()) {
            if (st.isPlaceholder()
                    || !st.isTiled()
                    || st.computeOp().reduceAxes().isEmpty()) continue;
            for (Iter it : st.all()) {
                String n = it.name();
                if ((n.equals("i.1") || n.equals("j.1") || n.equals("k.1")) && it.extent() != null && it.extent() != 1)
                    return false;
            }
        }
        return true;
    }

    @Test
    void withProbabilityOneEveryLevelOneSpatialTileIsOneAndTheProgramsComputeTheReference() {
        ComputeDAG dag = deepConv();
        SearchTask task = Workloads.task(dag);
        List<NDArray> in = new ArrayList<>();
        for (int i = 0; i < dag.inputs().size(); i++)
            in.add(NDArray.random(
                    dag.inputs().get(i).dtype(),
                    61 + i,
                    dag.inputs().get(i).shape().toArray()));
        NDArray expected = InitKBlockingTest.run(LowerDefault.lower("ref", dag), dag, in);
        List<Candidate> cs =
                sampler(task, 1).sample(30, new SplittableRandom(8)).candidates();
        assertThat(cs).hasSize(30);
        for (Candidate c : cs) {
            assertThat(weightsStayInsideTheReductionBlock(c)).as(c.key()).isTrue();
            Comparison cmp = InitKBlockingTest.run(Lowering.lower("streamed", c.schedule()), dag, in)
                    .compareTo(expected, 1e-4, 1e-4);
            assertThat(cmp.ok()).as(c.key() + "\n" + cmp.report()).isTrue();
        }
        assertThat(sampler(task, 0).sample(30, new SplittableRandom(8)).candidates())
                .as("Ansor's draw puts a row or column tile at level 1")
                .anyMatch(c -> !weightsStayInsideTheReductionBlock(c));
        assertThatThrownBy(() -> new InitFillTileSize(MEMO, 0.5, 0.25, 0.5, -0.1))
                .isInstanceOf(KilnException.class)
                .hasMessageContaining("streamedOperandProbability");
    }
}
