package dev.kiln.samples.onnx;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kiln.graph.Graph;
import dev.kiln.ir.DType;
import dev.kiln.ir.KilnException;
import dev.kiln.onnx.ModelWriter;
import dev.kiln.onnx.OnnxImporter;
import dev.kiln.onnx.OnnxZoo;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * QLinearConv and ConvInteger against ONNX Runtime: the int32 path and the packed path for the dot-product
 * instructions, every integer output exact (as {@link OnnxQuantOpsTest} checks the rest of the int8 family).
 */
class OnnxQuantConvTest {
    static Graph check(ModelWriter m) {
        return OnnxQuantOpsTest.check(m);
    }

    @Test
    void qlinearConvAndConvInteger() {
        ModelWriter m = new ModelWriter("qconv", 21)
                .input("x", DType.UINT8, "batch", 4L, 9L, 8L)
                .input("s", DType.INT8, "batch", 4L, 7L, 7L);
        String xs = m.floats("xs", new float[] {0.02f}), xz = m.ints("xz", DType.UINT8, new long[] {120});
        // per-channel weight scales, an int32 bias, stride 2 and uneven pads (padded with x's zero point); uint8 out
        m.output(
                m.node(
                        "QLinearConv",
                        new String[] {
                            "x",
                            xs,
                            xz,
                            m.randomInts("w", DType.INT8, 1, -63, 63, 6, 4, 3, 3),
                            m.uniform("ws", 2, 0.005, 0.02, 6),
                            m.ints("wz", DType.INT8, new long[6], 6),
                            m.floats("ys", new float[] {0.05f}),
                            m.ints("yz", DType.UINT8, new long[] {128}),
                            m.randomInts("b", DType.INT32, 3, -2000, 2000, 6)
                        },
                        "y",
                        "strides",
                        new long[] {2, 1},
                        "pads",
                        new long[] {1, 0, 2, 1}),
                DType.UINT8);
        // grouped, int8 in and out, per-tensor scales and zero points, no bias
        m.output(
                m.node(
                        "QLinearConv",
                        new String[] {
                            "s",
                            xs,
                            m.ints("sz", DType.INT8, new long[] {-5}),
                            m.randomInts("wg", DType.INT8, 4, -63, 63, 6, 2, 3, 3),
                            m.floats("wsg", new float[] {0.01f}),
                            m.ints("wzg", DType.INT8, new long[] {0}),
                            m.floats("ysg", new float[] {0.03f}),
                            m.ints("yzg", DType.INT8, new long[] {-7})
                        },
                        "y_grouped",
                        "group",
                        2L,
                        "pads",
                        new long[] {1, 1, 1, 1}),
                DType.INT8);
        // ConvInteger: uint8 data and weight, both zero points, a dilation
        m.output(
                m.node(
                        "ConvInteger",
                        new String[] {
                            "x",
                            m.randomInts("wu", DType.UINT8, 5, 0, 255, 3, 4, 2, 2),
                            xz,
                            m.ints("wuz", DType.UINT8, new long[] {100})
                        },
                        "acc",
                        "dilations",
                        new long[] {2, 1}),
                DType.INT32);
        // uint8 data, symmetric int8 weights, channels in fours and sixteens: the packed conv for the dot-product
        // instructions (x padded with its zero point, x_zero * sum(w) taken off through the bias)
        m.input("p", DType.UINT8, "batch", 8L, 10L, 9L);
        m.output(
                m.node(
                        "QLinearConv",
                        new String[] {
                            "p",
                            xs,
                            xz,
                            m.randomInts("wp", DType.INT8, 6, -63, 63, 16, 8, 3, 3),
                            m.uniform("wsp", 7, 0.005, 0.02, 16),
                            m.ints("wzp", DType.INT8, new long[16], 16),
                            m.floats("ysp", new float[] {0.05f}),
                            m.ints("yzp", DType.UINT8, new long[] {128}),
                            m.randomInts("bp", DType.INT32, 8, -2000, 2000, 16)
                        },
                        "y_packed",
                        "strides",
                        new long[] {2, 2},
                        "pads",
                        new long[] {1, 0, 2, 1}),
                DType.UINT8);
        // 24 output channels (a MobileNet-V2 projection's): the packed conv computes 32, the extra weights and
        // bias 0, requantises them and keeps the first 24
        m.input("p24", DType.UINT8, "batch", 20L, 5L, 6L);
        m.output(
                m.node(
                        "QLinearConv",
                        new String[] {
                            "p24",
                            xs,
                            xz,
                            m.randomInts("w24", DType.INT8, 9, -63, 63, 24, 20, 1, 1),
                            m.uniform("ws24", 10, 0.005, 0.02, 24),
                            m.ints("wz24", DType.INT8, new long[24], 24),
                            m.floats("ys24", new float[] {0.04f}),
                            m.ints("yz24", DType.UINT8, new long[] {100}),
                            m.randomInts("b24", DType.INT32, 11, -2000, 2000, 24)
                        },
                        "y_padded"),
                DType.UINT8);
        // (ConvInteger takes the same path with an int8 weight, which ONNX Runtime 1.23.2 has no kernel for: only
        // uint8 x uint8, which stays on the int32 path above)
        Graph g = check(m);
        assertThat(g.nodes().stream().map(n -> n.op().kind()))
                .contains("conv2d", "requantize", "strided_slice")
                .filteredOn("conv2d_packed"::equals)
                .as("the two convs that fit the dot-product instructions")
                .hasSize(2);
    }

    /**
     * ConvInteger with an int8 weight of 24 output channels takes the packed path (padded to 32, the first 24 kept).
     * ONNX Runtime 1.23.2 has no ConvInteger kernel for an int8 weight, so it runs the same convolution with the
     * weight as uint8 {@code w + 128} and zero point 128: {@code conv(x - xz, (w + 128) - 128)}.
     */
    @Test
    void convIntegerWithAnInt8WeightAndPaddedChannelsAgainstOnnxRuntimesUint8Kernel() {
        java.util.SplittableRandom r = new java.util.SplittableRandom(12);
        long[] w = new long[24 * 20 * 3 * 3], wu = new long[w.length];
        for (int i = 0; i < w.length; i++) {
            w[i] = r.nextLong(-127, 128);
            wu[i] = w[i] + 128;
        }
        java.util.function.BiFunction<DType, long[], ModelWriter> model = (t, values) -> {
            ModelWriter m = new ModelWriter("convint_padded", 21).input("x", DType.UINT8, "batch", 20L, 7L, 6L);
            return m.output(
                    m.node(
                            "ConvInteger",
                            new String[] {
                                "x",
                                m.ints("w", t, values, 24, 20, 3, 3),
                                m.ints("xz", DType.UINT8, new long[] {121}),
                                m.ints("wz", t, new long[] {t == DType.UINT8 ? 128 : 0})
                            },
                            "acc",
                            "strides",
                            new long[] {2, 2},
                            "pads",
                            new long[] {1, 1, 1, 1}),
                    DType.INT32);
        };
        Graph g = OnnxCheck.checkAgainst(
                model.apply(DType.UINT8, wu), model.apply(DType.INT8, w), Map.of("batch", 2L), 0, 0);
        assertThat(g.nodes().stream().map(n -> n.op().kind()))
                .contains("conv2d_packed", "strided_slice")
                .doesNotContain("conv2d");
    }

    @Test
    void qlinearConvRefusesWhatItCannotRun() {
        ModelWriter computed =
                refused("qconv_bad", m -> m.input("wx", DType.INT8, 2L, 4L, 3L, 3L), "wx", new float[] {0.01f});
        assertThatThrownBy(() -> OnnxImporter.fromModel(computed.build(), Map.of()))
                .isInstanceOf(KilnException.class)
                .hasMessageContaining("node 'qlinearconv_1' (QLinearConv)")
                .hasMessageContaining("the weight ('wx') must be a constant");
        ModelWriter scales = refused("qconv_bias", m -> {}, null, new float[] {0.01f, 0.02f, 0.03f});
        assertThatThrownBy(() -> OnnxImporter.fromModel(scales.build(), Map.of()))
                .isInstanceOf(KilnException.class)
                .hasMessageContaining("w_scale must be a scalar or one value per output channel (2), got shape [3]");
    }

    /**
     * A QLinearConv of uint8 x [1, 4, 5, 5] to uint8 "y" with weight {@code weight} (null: a constant int8 [2, 4, 3,
     * 3]) and weight scales {@code wScale} ([] for one value, [n] for more); {@code inputs} adds graph inputs first.
     */
    private static ModelWriter refused(
            String name, java.util.function.Consumer<ModelWriter> inputs, String weight, float[] wScale) {
        ModelWriter m = new ModelWriter(name, 21).input("x", DType.UINT8, 1L, 4L, 5L, 5L);
        inputs.accept(m);
        String w = weight != null ? weight : m.randomInts("w", DType.INT8, 1, -63, 63, 2, 4, 3, 3);
        String ws = wScale.length == 1 ? m.floats("ws", wScale) : m.floats("ws", wScale, wScale.length);
        m.node(
                "QLinearConv",
                new String[] {
                    "x",
                    m.floats("xs", new float[] {0.02f}),
                    m.ints("xz", DType.UINT8, new long[] {120}),
                    w,
                    ws,
                    m.ints("wz", DType.INT8, new long[] {0}),
                    m.floats("ys", new float[] {0.05f}),
                    m.ints("yz", DType.UINT8, new long[] {128})
                },
                "y");
        return m.output("y", DType.UINT8);
    }

    @Test
    void quantizedCnnFromTheZoo() {
        // uint8 "conv3_q" exactly; the pooled float features within float32 rounding of ONNX Runtime's sum order
        Graph g = OnnxCheck.check(OnnxZoo.quantizedCnn("qcnn", 16, 20, 3), Map.of("batch", 2L), 1e-5, 1e-6, true);
        // all three on the packed path, the RGB input's 3 channels padded to 4
        assertThat(g.nodes().stream().map(n -> n.op().kind()))
                .filteredOn("conv2d_packed"::equals)
                .hasSize(3);
    }
}
