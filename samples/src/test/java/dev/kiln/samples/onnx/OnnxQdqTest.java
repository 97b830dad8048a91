package dev.kiln.samples.onnx;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kiln.graph.Graph;
import dev.kiln.ir.DType;
import dev.kiln.onnx.ModelWriter;
import dev.kiln.onnx.OnnxZoo;
import dev.kiln.runtime.NDArray;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Statically quantised models in QDQ form against ONNX Runtime: the units DequantizeLinear -> Conv / MatMul ->
 * QuantizeLinear become QLinearConv / QLinearMatMul at import (on the dot-product path) as ONNX Runtime's QDQ
 * transformer makes them, and what does not fit stays float.
 */
class OnnxQdqTest {
    private static List<String> kinds(Graph g) {
        return g.nodes().stream().map(n -> n.op().kind()).toList();
    }

    /** int8 activations (what ONNX Runtime's quantiser writes by default) and uint8 (what it recommends on x86). */
    @ParameterizedTest
    @ValueSource(strings = {"INT8", "UINT8"})
    void aQdqResnetRunsItsConvsInInt8AndMatchesOnnxRuntime(String activations) {
        DType t = DType.valueOf(activations);
        ModelWriter m = OnnxZoo.qdqResnet("qdq_resnet", new int[] {1, 1}, 16, 32, 10, t, 5)
                .output("layer2.0.out_q", t);
        // the 8-bit tensors exactly (the residual Add and the pools in float between them: ONNX Runtime's
        // QLinearAdd and QLinearGlobalAveragePool round the same values); the float classifier within float32
        // rounding
        Graph g = OnnxCheck.check(m, Map.of("batch", 2L), 1e-5, 1e-6, true);
        // stem, three per block and each stage's downsample: 9 convs, all int8 on the dot-product path
        assertThat(kinds(g))
                .doesNotContain("conv2d")
                .filteredOn("conv2d_packed"::equals)
                .hasSize(9);
        // the internal int8 activations are kept as uint8 (zero points + 128): no shift before any conv
        assertThat(kinds(g)).doesNotContain("cast");
        // the scales keep the last block's output in range: many levels, few saturated
        NDArray out = OnnxCheck.ort(m.toBytes(), g, List.of(OnnxCheck.random(7, 2, 3, 32, 32)), 1)
                .get(1);
        TreeSet<Long> levels = new TreeSet<>();
        long top = 0, zero = 0;
        for (long i = 0; i < out.numElements(); i++) {
            long v = out.getLongFlat(i);
            levels.add(v);
            if (v == t.maxInt()) top++;
            if (v == t.minInt()) zero++;
        }
        assertThat(levels.size()).isGreaterThan(100);
        assertThat((double) top / out.numElements()).isLessThan(0.02);
        assertThat((double) zero / out.numElements()).isLessThan(0.8);
    }

    /**
     * A QDQ MobileNet-V2 (all seven stages at width 0.5 on 32 x 32 images: the expansion-free first block, stride-2
     * and residual blocks, all three kinds of conv) against ONNX Runtime, which runs every conv as QLinearConv, the
     * depthwise ones too, and the adds as QLinearAdd. Kiln's stem, expansions, projections and last conv are int8
     * on the dot-product path; the depthwise convs compute in float between their 8-bit
     * input and output, the same values. The 8-bit block outputs agree exactly, the logits within float32 rounding.
     * (ONNX Runtime's QLinearAdd precomputes its scale ratios in float where the model's Add rounds the exact sum,
     * so a near tie can round the other way; with these scales no output here is one.)
     */
    @ParameterizedTest
    @ValueSource(strings = {"INT8", "UINT8"})
    void aQdqMobilenetV2MatchesOnnxRuntime(String activations) {
        DType t = DType.valueOf(activations);
        ModelWriter m = OnnxZoo.qdqMobilenetV2("qdq_mnv2", 32, 0.5, 7, 10, t, 3)
                .output("features.2.1.out_q", t)
                .output("features.4.3.out_q", t)
                .output("features.6.2.out_q", t);
        Graph g = OnnxCheck.check(m, Map.of("batch", 2L), 1e-5, 1e-5, true);
        // the stem, 16 expansions, 17 projections (those of 8 and 24 channels padded to 16 and 32) and the last conv
        assertThat(kinds(g)).filteredOn("conv2d_packed"::equals).hasSize(35);
        assertThat(g.nodes())
                .filteredOn(n -> n.op() instanceof dev.kiln.graph.AnchorOps.Conv2d c && c.groups() > 1)
                .hasSize(17);
        // uint8 activations go to the dot products as they are (int8 ones the model returns stay int8 and are
        // shifted for their readers)
        if (t == DType.UINT8) assertThat(kinds(g)).doesNotContain("cast");
    }

    /** {@code q(x)}: x quantised to int8 with scale {@code s} and zero point {@code z}, then dequantised. */
    private static String qdq(ModelWriter m, String x, String name, float s, long z) {
        String sc = m.floats(name + ".s", new float[] {s}), zp = m.ints(name + ".z", DType.INT8, new long[] {z});
        String q = m.node("QuantizeLinear", new String[] {x, sc, zp}, name);
        return m.node("DequantizeLinear", new String[] {q, sc, zp}, name + "_dq");
    }

    /** An int8 weight [shape] behind a DequantizeLinear with per-axis-0 scales (zero points 0). */
    private static String weight(ModelWriter m, String name, long seed, long... shape) {
        String w = m.randomInts(name + "_q", DType.INT8, seed, -127, 127, shape);
        String s = m.uniform(name + ".s", seed + 1, 0.002, 0.004, shape[0]);
        String z = m.ints(name + ".z", DType.INT8, new long[(int) shape[0]], shape[0]);
        return m.node("DequantizeLinear", new String[] {w, s, z}, name, "axis", 0L);
    }

    private static String conv(ModelWriter m, String x, String w, String name, long group, String bias) {
        String[] in = bias == null ? new String[] {x, w} : new String[] {x, w, bias};
        return m.node("Conv", in, name, "pads", new long[] {1, 1, 1, 1}, "group", group);
    }

    @Test
    void theUnitsThatFitBecomeInt8OperatorsAndMatchOnnxRuntimeExactly() {
        ModelWriter m =
                new ModelWriter("qdq_units", 21).input("x", "batch", 8L, 6L, 6L).input("v", "batch", 40L);
        String x = qdq(m, "x", "x_q", 0.01f, -3);
        // a conv with an explicit Relu whose output's zero point is int8's minimum (the Relu changes nothing)
        String c = conv(m, x, weight(m, "w1", 1, 16, 8, 3, 3), "conv_relu", 1, null);
        String r = m.node("Relu", new String[] {c}, "relu");
        m.node(
                "QuantizeLinear",
                new String[] {r, m.floats("y1.s", new float[] {0.02f}), m.ints("y1.z", DType.INT8, new long[] {-128})},
                "y_relu");
        // a conv with an int32 bias at x_scale * w_scale
        float[] bs = new float[16];
        String ws = "w2";
        String w2 = weight(m, ws, 3, 16, 8, 3, 3);
        // (the scales of weight(m, "w2", 3, ...) are uniform(seed 4): recomputed here the same way)
        java.util.SplittableRandom rs = new java.util.SplittableRandom(4);
        for (int o = 0; o < 16; o++) bs[o] = 0.01f * (float) (0.002 + 0.002 * rs.nextDouble());
        String b = m.node(
                "DequantizeLinear",
                new String[] {m.randomInts("b_q", DType.INT32, 5, -500, 500, 16), m.floats("b.s", bs, 16)},
                "b",
                "axis",
                0L);
        m.node(
                "QuantizeLinear",
                new String[] {
                    conv(m, x, w2, "conv_bias", 1, b),
                    m.floats("y2.s", new float[] {0.03f}),
                    m.ints("y2.z", DType.INT8, new long[] {5})
                },
                "y_bias");
        // a MatMul of an int8 activation by per-column int8 weights, 32 columns
        String v = qdq(m, "v", "v_q", 0.02f, 7);
        String wm = m.randomInts("wm_q", DType.INT8, 6, -127, 127, 40, 32);
        String wmd = m.node(
                "DequantizeLinear",
                new String[] {wm, m.uniform("wm.s", 7, 0.002, 0.004, 32), m.ints("wm.z", DType.INT8, new long[32], 32)},
                "wm",
                "axis",
                1L);
        m.node(
                "QuantizeLinear",
                new String[] {
                    m.node("MatMul", new String[] {v, wmd}, "mm"),
                    m.floats("y3.s", new float[] {0.05f}),
                    m.ints("y3.z", DType.INT8, new long[] {0})
                },
                "y_mm");
        // a max pool between quantize steps of the same scale and zero point: pooled in int8
        String pool = m.node(
                "MaxPool",
                new String[] {x},
                "pool",
                "kernel_shape",
                new long[] {3, 3},
                "strides",
                new long[] {2, 2},
                "pads",
                new long[] {1, 1, 1, 1});
        m.node("QuantizeLinear", new String[] {pool, "x_q.s", "x_q.z"}, "y_pool");
        m.output("y_relu", DType.INT8).output("y_bias", DType.INT8).output("y_mm", DType.INT8);
        m.output("y_pool", DType.INT8);
        Graph g = OnnxQuantOpsTest.check(m);
        assertThat(kinds(g)).doesNotContain("dequantize");
        assertThat(kinds(g)).doesNotContain("conv2d", "dense", "matmul", "relu");
        assertThat(kinds(g)).filteredOn("conv2d_packed"::equals).hasSize(2);
        assertThat(kinds(g)).filteredOn("matmul_packed"::equals).hasSize(1);
    }

    @Test
    void theUnitsThatDoNotFitStayFloat() {
        ModelWriter m = new ModelWriter("qdq_float_units", 21)
                .input("x", "batch", 8L, 6L, 6L)
                .input("v", "batch", 40L);
        String x = qdq(m, "x", "x_q", 0.01f, -3);
        String[] names = {"y_relu_above_min", "y_depthwise", "y_float_bias", "y_also_returned", "y_narrow"};
        float[] scale = {0.02f, 0.01f, 0.03f, 0.03f, 0.05f};
        // a Relu that clamps above the output's minimum (zero point 10)
        String r = m.node("Relu", new String[] {conv(m, x, weight(m, "w1", 1, 16, 8, 3, 3), "c1", 1, null)}, "relu");
        // a depthwise conv (no dot-product path)
        String d = conv(m, x, weight(m, "wd", 3, 8, 1, 3, 3), "depthwise", 8, null);
        // a float bias (not x_scale * w_scale in int32)
        String fb = conv(m, x, weight(m, "w2", 5, 16, 8, 3, 3), "c2", 1, m.uniform("bf", 7, -0.1, 0.1, 16));
        // a conv whose float output the graph also returns
        String ret = conv(m, x, weight(m, "w3", 8, 16, 8, 3, 3), "c3", 1, null);
        // a MatMul of 10 columns (not a multiple of 16)
        String v = qdq(m, "v", "v_q", 0.02f, 7);
        String wn = m.node(
                "DequantizeLinear",
                new String[] {
                    m.randomInts("wn_q", DType.INT8, 9, -127, 127, 40, 10),
                    m.floats("wn.s", new float[] {0.003f}),
                    m.ints("wn.z", DType.INT8, new long[] {0})
                },
                "wn");
        String nm = m.node("MatMul", new String[] {v, wn}, "narrow");
        String[] units = {r, d, fb, ret, nm};
        long[] zeros = {10, 0, 0, 0, 0};
        for (int i = 0; i < units.length; i++) {
            String s = m.floats(names[i] + ".s", new float[] {scale[i]});
            String z = m.ints(names[i] + ".z", DType.INT8, new long[] {zeros[i]});
            String q = m.node("QuantizeLinear", new String[] {units[i], s, z}, names[i] + "_q");
            m.output(m.node("DequantizeLinear", new String[] {q, s, z}, names[i]));
        }
        m.output("c3");
        // float in Kiln, integer in ONNX Runtime (its QDQ transformer fuses them all): within one step (0.05)
        Graph g = OnnxCheck.check(m, Map.of("batch", 2L), 0, 0.0501, true);
        assertThat(kinds(g)).doesNotContain("conv2d_packed", "matmul_packed");
    }
}
