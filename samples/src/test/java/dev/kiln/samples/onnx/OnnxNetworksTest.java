package dev.kiln.samples.onnx;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kiln.graph.Graph;
import dev.kiln.graph.pass.GraphPasses;
import dev.kiln.onnx.ModelWriter;
import dev.kiln.onnx.OnnxImporter;
import dev.kiln.onnx.OnnxZoo;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Whole networks written as ONNX files (PyTorch-style exports with seeded weights), imported, and
 * checked against ONNX Runtime: small versions also through the reference interpreter, the full
 * ResNet-50, MobileNet-V2 and BERT-base layer compiled (smaller images and sequence to keep the
 * test short). Tolerance: rtol 1e-3, atol 1e-4 (float32 sums over many layers, in other orders).
 */
class OnnxNetworksTest {
    static final double RTOL = 1e-3, ATOL = 1e-4;

    @Test
    void smallResNet() {
        Graph g = OnnxCheck.check(
                OnnxZoo.resnet("resnet_small", new int[] {1, 1}, 8, 32, 10, 1), Map.of("batch", 2L), RTOL, ATOL, true);
        // every conv is NHWC, and the only transpose is the input's
        assertThat(g.nodes().stream().filter(n -> n.op().kind().equals("conv2d")))
                .allMatch(n -> n.op().attrs().startsWith("NHWC"));
        assertThat(g.nodes().stream().filter(n -> n.op().kind().equals("transpose")))
                .hasSize(1);
    }

    @Test
    void loadsAFileWrittenByModelWriter(@TempDir Path dir) {
        ModelWriter m = OnnxZoo.resnet("resnet_file", new int[] {1}, 8, 16, 10, 1);
        Graph fromFile = OnnxImporter.load(m.write(dir.resolve("r.onnx")), Map.of("batch", 3L));
        assertThat(fromFile.toString())
                .isEqualTo(
                        OnnxImporter.fromModel(m.build(), Map.of("batch", 3L)).toString());
        assertThat(fromFile.inputs().getFirst().shape()).containsExactly(3L, 3L, 16L, 16L);
    }

    @Test
    void smallMobileNetV2() {
        OnnxCheck.check(
                OnnxZoo.mobilenetV2("mobilenet_small", 32, 0.25, 4, 10, 2), Map.of("batch", 1L), RTOL, ATOL, true);
    }

    @Test
    void smallBertLayersOldAndNewOpsets() {
        OnnxCheck.check(OnnxZoo.bertLayer("bert13", 8, 32, 4, 64, 13, 3), Map.of("batch", 2L), RTOL, ATOL, true);
        Graph g = OnnxCheck.check(
                OnnxZoo.bertLayer("bert20", 8, 32, 4, 64, 20, 3), Map.of("batch", 2L), RTOL, ATOL, true);
        assertThat(g.nodes().stream().map(n -> n.op().kind()))
                .contains("layer_norm", "gelu", "batch_matmul", "dense", "softmax");
    }

    @Test
    void smallBertWithEmbeddingsAndMask() {
        Map<String, long[]> ids = Map.of(
                "input_ids", new long[] {0, 100}, "token_type_ids", new long[] {0, 2}, "attention_mask", new long[] {
                    0, 2
                });
        Graph g = OnnxCheck.check(
                OnnxZoo.bert("bert_small", 100, 16, 8, 64, 4, 128, 2, 20, 7),
                Map.of("batch", 2L),
                RTOL,
                ATOL,
                true,
                ids);
        assertThat(g.inputs().stream().map(v -> v.dtype().displayName())).containsOnly("int64");
        assertThat(g.nodes().stream().filter(n -> n.op().kind().equals("take")))
                .as("word and token-type lookups")
                .hasSize(2);
        OnnxCheck.check(
                OnnxZoo.bert("bert_small13", 100, 8, 8, 32, 2, 64, 1, 13, 8),
                Map.of("batch", 1L),
                RTOL,
                ATOL,
                false,
                ids);
    }

    @Test
    void resNet50() {
        Graph g = OnnxCheck.check(OnnxZoo.resnet50(64, 4), Map.of("batch", 1L), RTOL, ATOL, false);
        assertThat(GraphPasses.optimize(g).nodes().stream()
                        .filter(n -> n.op().kind().equals("conv2d")))
                .hasSize(53);
    }

    @Test
    void mobileNetV2() {
        OnnxCheck.check(OnnxZoo.mobilenetV2(64, 5), Map.of("batch", 1L), RTOL, ATOL, false);
    }

    @Test
    void bertBaseLayer() {
        OnnxCheck.check(
                OnnxZoo.bertLayer("bert_base_layer", 32, 768, 12, 3072, 20, 6), Map.of("batch", 1L), RTOL, ATOL, false);
    }
}
