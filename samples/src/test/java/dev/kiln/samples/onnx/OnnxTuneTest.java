package dev.kiln.samples.onnx;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kiln.autoschedule.measure.LocalMeasurer;
import dev.kiln.autoschedule.measure.MeasureOptions;
import dev.kiln.autoschedule.network.CompiledNetwork;
import dev.kiln.autoschedule.network.Network;
import dev.kiln.autoschedule.network.NetworkTuneOptions;
import dev.kiln.autoschedule.scheduler.TaskStatus;
import dev.kiln.autoschedule.search.RandomSearchPolicy;
import dev.kiln.graph.Graph;
import dev.kiln.onnx.OnnxZoo;
import dev.kiln.target.CpuTarget;
import dev.kiln.target.Target;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The integer and lookup operators tune like the rest: the quantised MLP (quantize, matmul_packed and dense_integer
 * with its requantize epilogue, dequantize, cast) and a small BERT with embeddings (take on run-time
 * ids, mask) tuned a few trials per task (random sampling, in-process measurement), then checked
 * against ONNX Runtime: integer outputs exactly, float outputs with the tolerance of the untuned tests.
 */
class OnnxTuneTest {

    private static CompiledNetwork tune(Graph g, LocalMeasurer m, CpuTarget target) {
        int tasks = Network.tasks(g, target).size();
        CompiledNetwork cn = Network.tune(
                g,
                target,
                NetworkTuneOptions.builder()
                        .trials(2 * tasks)
                        .measuresPerRound(2)
                        .seed(5)
                        .measurer(m)
                        .policies(RandomSearchPolicy::forTask)
                        .build());
        // a tiny task (a cast and a multiply on [4, 10]) may run out of distinct programs before its
        // share of trials: that ends its search (SEARCH_SPACE_EXHAUSTED), which is not a failure
        assertThat(cn.tuning().orElseThrow().newTrials()).isBetween(tasks, 2 * tasks);
        assertThat(cn.tuning().orElseThrow().deadTasks())
                .allSatisfy(t -> assertThat(t.status()).isEqualTo(TaskStatus.SEARCH_SPACE_EXHAUSTED));
        return cn;
    }

    @Test
    void quantizedMlpAndCnnAndBertWithEmbeddingsTuneAndMatchOnnxRuntime() {
        CpuTarget target = Target.cpu();
        MeasureOptions fast = MeasureOptions.smoke();
        try (LocalMeasurer m = LocalMeasurer.of(target, fast)) {
            Graph q = OnnxCheck.checkBuilt(
                    OnnxZoo.quantizedMlp("qmlp", 48, 64, 10, 3),
                    Map.of("batch", 4L),
                    1e-6,
                    0,
                    Map.of(),
                    g -> tune(g, m, target));
            assertThat(q.nodes().stream().map(n -> n.op().kind()))
                    .contains("quantize", "matmul_packed", "dense_integer", "requantize", "dequantize", "cast");
            Graph c = OnnxCheck.checkBuilt(
                    OnnxZoo.quantizedCnn("qcnn", 16, 12, 3),
                    Map.of("batch", 1L),
                    1e-5,
                    1e-6,
                    Map.of(),
                    g -> tune(g, m, target));
            assertThat(c.nodes().stream().map(n -> n.op().kind())).contains("conv2d_packed", "requantize");
            Map<String, long[]> ids = Map.of(
                    "input_ids",
                    new long[] {0, 100},
                    "token_type_ids",
                    new long[] {0, 2},
                    "attention_mask",
                    new long[] {0, 2});
            OnnxCheck.checkBuilt(
                    OnnxZoo.bert("bert_small", 100, 16, 8, 32, 2, 64, 1, 20, 9),
                    Map.of("batch", 1L),
                    OnnxNetworksTest.RTOL,
                    OnnxNetworksTest.ATOL,
                    ids,
                    g -> tune(g, m, target));
        }
    }
}
