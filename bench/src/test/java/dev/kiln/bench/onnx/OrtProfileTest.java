package dev.kiln.bench.onnx;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kiln.ir.KilnException;
import dev.kiln.onnx.proto.Onnx;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Reading ONNX Runtime's profile trace: only the {@code <node>_kernel_time} events of category {@code Node}
 * count, each node's time is the median of its runs (the warm-up's slow first run does not move it), and nodes
 * keep the order of their first run; ONNX Runtime's names for the nodes it rewrote, and a QDQ unit's float value,
 * lead back to the names Kiln's calls carry.
 */
class OrtProfileTest {
    private static String event(String cat, String name, double durUs, String op) {
        return "{\"cat\":\"" + cat + "\",\"pid\":1,\"tid\":1,\"dur\":" + durUs + ",\"ts\":0,\"ph\":\"X\",\"name\":\""
                + name + "\",\"args\":{\"op_name\":\"" + op + "\"}}";
    }

    @Test
    void nodeTimesAreMediansOfTheirKernelTimeEvents() throws Exception {
        String trace = "["
                + String.join(
                        ",",
                        event("Session", "model_run", 5000, ""),
                        event("Node", "conv_a_nchwc_fence_before", 1, "Conv"),
                        event("Node", "conv_a_nchwc_kernel_time", 900, "Conv"), // the first, cold run
                        event("Node", "gemm_1_kernel_time", 40, "Gemm"),
                        event("Node", "conv_a_nchwc_kernel_time", 100, "Conv"),
                        event("Node", "gemm_1_kernel_time", 60, "Gemm"),
                        event("Node", "conv_a_nchwc_kernel_time", 120, "Conv"))
                + "]";
        OrtProfile p = OrtProfile.parse(trace);
        assertThat(p.nodes())
                .containsExactly(
                        new OrtProfile.NodeTime("conv_a_nchwc", "Conv", 0.12),
                        new OrtProfile.NodeTime("gemm_1", "Gemm", 0.05));
        assertThat(p.totalMs()).isCloseTo(0.17, org.assertj.core.data.Offset.offset(1e-12));
    }

    @Test
    void namesOnnxRuntimeGaveItsRewrittenNodesLeadBackToTheModelsNames() {
        assertThat(OrtProfile.candidates("features.2.0.dw.relu6_nchwc"))
                .containsExactly("features.2.0.dw.relu6_nchwc", "features.2.0.dw.relu6");
        assertThat(OrtProfile.candidates("fused gemm_1")).containsExactly("fused gemm_1", "gemm_1");
        assertThat(OrtProfile.candidates("fused conv_3_nchwc")).contains("conv_3_nchwc", "conv_3");
        assertThat(OrtProfile.candidates("conv_9_token_28")).containsExactly("conv_9_token_28", "conv_9");
    }

    @Test
    void aQdqUnitsFloatValueLeadsToItsQuantizedOutput() {
        var g = Onnx.GraphProto.newBuilder()
                .addNode(node("conv_9", "Conv", List.of("x_dq", "w_dq"), "c9"))
                .addNode(node("q9", "QuantizeLinear", List.of("c9", "s", "z"), "layer2.0.conv1_q"))
                .addNode(node("conv_10", "Conv", List.of("a", "w2"), "c10"))
                .addNode(node("relu_10", "Relu", List.of("c10"), "r10"))
                .addNode(node("q10", "QuantizeLinear", List.of("r10", "s", "z"), "layer2.0.conv2_q"))
                .addNode(node("conv_11", "Conv", List.of("a", "w3"), "c11"))
                .addNode(node("relu_11", "Relu", List.of("c11"), "r11"))
                .addNode(node("q11", "QuantizeLinear", List.of("r11", "s", "z"), "q11_out"))
                .addNode(node("other", "Add", List.of("r11", "a"), "sum")) // r11 has two readers
                .build();
        var quantized = OrtProfile.quantizedOutputs(
                Onnx.ModelProto.newBuilder().setGraph(g).build());
        assertThat(quantized)
                .containsEntry("c9", "layer2.0.conv1_q")
                .containsEntry("r10", "layer2.0.conv2_q")
                .containsEntry("c10", "layer2.0.conv2_q")
                .containsEntry("r11", "q11_out")
                .doesNotContainKey("c11");
    }

    private static Onnx.NodeProto node(String name, String op, List<String> in, String out) {
        return Onnx.NodeProto.newBuilder()
                .setName(name)
                .setOpType(op)
                .addAllInput(in)
                .addOutput(out)
                .build();
    }

    @Test
    void aTraceThatIsNotAnEventListIsRefused() {
        assertThatThrownBy(() -> OrtProfile.parse("{\"traceEvents\":[]}"))
                .isInstanceOf(KilnException.class)
                .hasMessageContaining("JSON array");
    }
}
