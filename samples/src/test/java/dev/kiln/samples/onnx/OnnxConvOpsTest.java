package dev.kiln.samples.onnx;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kiln.graph.Graph;
import dev.kiln.ir.KilnException;
import dev.kiln.onnx.ModelWriter;
import dev.kiln.onnx.OnnxImporter;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Convolution, pooling and batch norm, each a small model checked against ONNX Runtime (rtol 1e-4, atol 1e-5). */
class OnnxConvOpsTest {
    static final double RTOL = 1e-4, ATOL = 1e-5;

    static Graph check(ModelWriter m) {
        return OnnxCheck.check(m, Map.of("batch", 2L), RTOL, ATOL, true);
    }

    @Test
    void convWithBiasStrideAndAsymmetricPads() {
        ModelWriter m = new ModelWriter("conv", 13).input("x", "batch", 3L, 9L, 8L);
        m.node(
                "Conv",
                new String[] {"x", m.weight("w", 1, 0.3, 4, 3, 3, 3), m.weight("b", 2, 0.5, 4)},
                "y",
                "strides",
                new long[] {2, 1},
                "pads",
                new long[] {1, 0, 2, 1});
        Graph g = check(m.output("y"));
        assertThat(g.toString()).contains("NHWC");
    }

    @Test
    void groupedDilatedConvAndSameUpper() {
        // ONNX Runtime refuses dilations together with SAME padding, so each gets its own conv
        ModelWriter m = new ModelWriter("conv", 17).input("x", 1L, 4L, 10L, 10L);
        m.node(
                "Conv",
                new String[] {"x", m.weight("w", 1, 0.3, 6, 2, 3, 3)},
                "y",
                "group",
                2L,
                "dilations",
                new long[] {2, 2},
                "pads",
                new long[] {2, 1, 2, 1},
                "kernel_shape",
                new long[] {3, 3});
        m.node(
                "Conv",
                new String[] {"x", m.weight("w2", 2, 0.3, 4, 4, 2, 2)},
                "z",
                "auto_pad",
                "SAME_UPPER",
                "strides",
                new long[] {3, 3});
        OnnxCheck.check(m.output("y").output("z"), Map.of(), RTOL, ATOL, true);
    }

    @Test
    void depthwiseConvReluSixAndSameLowerStride2() {
        ModelWriter m = new ModelWriter("dw", 21).input("x", "batch", 8L, 7L, 7L);
        String y = m.node(
                "Conv",
                new String[] {"x", m.weight("w", 3, 0.5, 8, 1, 3, 3)},
                "c",
                "group",
                8L,
                "strides",
                new long[] {2, 2},
                "auto_pad",
                "SAME_LOWER");
        m.node("Clip", new String[] {y, m.floats("lo", new float[] {0}), m.floats("hi", new float[] {0.25f})}, "y");
        check(m.output("y"));
    }

    @Test
    void poolsAndBatchNorm() {
        ModelWriter m = new ModelWriter("pools", 13).input("x", "batch", 3L, 8L, 8L);
        String bn = m.node(
                "BatchNormalization",
                new String[] {
                    "x",
                    m.uniform("g", 1, 0.5, 1.5, 3),
                    m.weight("b", 2, 0.2, 3),
                    m.weight("mu", 3, 0.2, 3),
                    m.uniform("var", 4, 0.5, 1.5, 3)
                },
                "bn",
                "epsilon",
                1e-3);
        String mp = m.node(
                "MaxPool",
                new String[] {bn},
                "mp",
                "kernel_shape",
                new long[] {3, 3},
                "strides",
                new long[] {2, 2},
                "pads",
                new long[] {1, 1, 1, 1});
        m.node(
                "AveragePool",
                new String[] {mp},
                "ap",
                "kernel_shape",
                new long[] {2, 2},
                "strides",
                new long[] {1, 1},
                "pads",
                new long[] {1, 1, 1, 1},
                "count_include_pad",
                1L);
        m.node(
                "AveragePool",
                new String[] {bn},
                "ap0",
                "kernel_shape",
                new long[] {3, 3},
                "strides",
                new long[] {2, 2},
                "pads",
                new long[] {1, 1, 1, 1});
        m.node("GlobalAveragePool", new String[] {mp}, "gap");
        check(m.output("ap").output("ap0").output("gap"));
    }

    @Test
    void imageOpsMixWithBroadcastConcatAndReductions() {
        // conv (NHWC inside) + a [C,1,1] bias by Add, channel concat, ReduceMean over H and W, a transpose and a
        // flatten
        ModelWriter m = new ModelWriter("mix", 18).input("x", "batch", 2L, 6L, 6L);
        String c = m.node("Conv", new String[] {"x", m.weight("w", 1, 0.4, 4, 2, 1, 1)}, "c");
        String a = m.node("Add", new String[] {c, m.weight("cb", 2, 0.5, 4, 1, 1)}, "a");
        String s = m.node("Sigmoid", new String[] {a}, "s");
        String cat = m.node("Concat", new String[] {s, c, "x"}, "cat", "axis", 1L);
        m.node("ReduceMean", new String[] {cat, m.longs("hw", 2, 3)}, "mean", "keepdims", 0L);
        m.node("ReduceMean", new String[] {cat, m.longs("hw1", 2, 3)}, "mean1", "keepdims", 1L);
        m.node("Transpose", new String[] {cat}, "t", "perm", new long[] {0, 3, 1, 2});
        m.node("Flatten", new String[] {m.node("Relu", new String[] {cat}, "r")}, "flat", "axis", 2L);
        check(m.output("mean").output("mean1").output("t").output("flat"));
    }

    @Test
    void poolsWithCeilModeRectangularWindowsAndPadCounting() {
        ModelWriter m = new ModelWriter("pools2", 13).input("x", "batch", 3L, 9L, 10L);
        m.output(m.node(
                "MaxPool",
                new String[] {"x"},
                "max_ceil",
                "kernel_shape",
                new long[] {3, 3},
                "strides",
                new long[] {2, 2},
                "ceil_mode",
                1L));
        m.output(m.node(
                "AveragePool",
                new String[] {"x"},
                "avg_ceil",
                "kernel_shape",
                new long[] {2, 3},
                "strides",
                new long[] {2, 2},
                "pads",
                new long[] {0, 1, 1, 0},
                "ceil_mode",
                1L));
        m.output(m.node(
                "AveragePool",
                new String[] {"x"},
                "avg_incl",
                "kernel_shape",
                new long[] {3, 3},
                "strides",
                new long[] {2, 2},
                "pads",
                new long[] {1, 1, 1, 1},
                "count_include_pad",
                1L));
        m.output(m.node(
                "AveragePool",
                new String[] {"x"},
                "avg_incl_rect",
                "kernel_shape",
                new long[] {3, 2},
                "strides",
                new long[] {1, 2},
                "pads",
                new long[] {1, 0, 1, 0},
                "count_include_pad",
                1L,
                "ceil_mode",
                1L));
        m.output(m.node(
                "MaxPool",
                new String[] {"x"},
                "max_same",
                "kernel_shape",
                new long[] {2, 3},
                "strides",
                new long[] {1, 2},
                "auto_pad",
                "SAME_UPPER"));
        Graph g = check(m);
        assertThat(g.nodes().stream().map(n -> n.op().attrs())).anyMatch(a -> a.contains("kernel=[2, 3]"));
    }

    @Test
    void conv1dAndConv3dInOnnxLayout() {
        ModelWriter m =
                new ModelWriter("conv_nd", 13).input("s", "batch", 4L, 17L).input("v", "batch", 2L, 5L, 6L, 7L);
        m.output(m.node(
                "Conv",
                new String[] {"s", m.weight("w1", 1, 0.3, 6, 2, 3), m.weight("b1", 2, 0.1, 6)},
                "c1",
                "strides",
                new long[] {2},
                "pads",
                new long[] {1, 0},
                "group",
                2L));
        m.output(m.node(
                "Conv",
                new String[] {"s", m.weight("w1d", 3, 0.3, 3, 4, 3)},
                "c1_dilated",
                "dilations",
                new long[] {2},
                "pads",
                new long[] {2, 1}));
        m.output(m.node(
                "Conv",
                new String[] {"s", m.weight("w1s", 6, 0.3, 3, 4, 4)},
                "c1_same",
                "strides",
                new long[] {2},
                "auto_pad",
                "SAME_LOWER"));
        m.output(m.node(
                "Conv",
                new String[] {"v", m.weight("w3", 4, 0.3, 3, 2, 2, 3, 3), m.weight("b3", 5, 0.1, 3)},
                "c3",
                "strides",
                new long[] {1, 2, 1},
                "pads",
                new long[] {0, 1, 1, 1, 0, 1}));
        Graph g = check(m);
        assertThat(g.nodes().stream().map(n -> n.op().kind())).contains("conv1d", "conv3d");
    }

    @Test
    void convTranspose2d() {
        ModelWriter m = new ModelWriter("conv_t", 13).input("x", "batch", 4L, 5L, 6L);
        m.output(m.node(
                "ConvTranspose",
                new String[] {"x", m.weight("w", 1, 0.3, 4, 3, 3, 3), m.weight("b", 2, 0.1, 3)},
                "up",
                "strides",
                new long[] {2, 2},
                "pads",
                new long[] {1, 1, 1, 1},
                "output_padding",
                new long[] {1, 0}));
        m.output(m.node(
                "ConvTranspose",
                new String[] {"x", m.weight("wg", 3, 0.3, 4, 1, 2, 3)},
                "up_grouped",
                "group",
                2L,
                "strides",
                new long[] {1, 2},
                "dilations",
                new long[] {2, 1}));
        String c = m.node(
                "Conv", new String[] {"x", m.weight("wc", 4, 0.3, 4, 4, 3, 3)}, "c", "pads", new long[] {1, 1, 1, 1});
        m.output(m.node(
                "ConvTranspose",
                new String[] {c, m.weight("w2", 5, 0.3, 4, 2, 2, 2)},
                "after_nhwc",
                "strides",
                new long[] {2, 2}));
        Graph g = check(m);
        assertThat(g.nodes().stream().map(n -> n.op().kind())).contains("conv2d_transpose");
    }

    @Test
    void convTransposeOutputShapeAndSamePadding() {
        ModelWriter m = new ModelWriter("conv_t_shape", 13).input("x", "batch", 2L, 4L, 5L);
        // total padding 2*3+2+1-8 = 1 and 2*4+2+1-10 = 1 (odd): ONNX puts the odd element first unless SAME_UPPER
        m.output(m.node(
                "ConvTranspose",
                new String[] {"x", m.weight("w", 1, 0.3, 2, 3, 3, 3)},
                "shaped",
                "strides",
                new long[] {2, 2},
                "output_shape",
                new long[] {8, 10}));
        m.output(m.node(
                "ConvTranspose",
                new String[] {"x", m.weight("w2", 2, 0.3, 2, 3, 3, 3)},
                "shaped_upper",
                "strides",
                new long[] {2, 2},
                "auto_pad",
                "SAME_UPPER",
                "output_shape",
                new long[] {1, 3, 8, 10}));
        m.output(m.node(
                "ConvTranspose",
                new String[] {"x", m.weight("w3", 3, 0.3, 2, 3, 2, 2)},
                "same_lower",
                "strides",
                new long[] {2, 2},
                "dilations",
                new long[] {2, 1},
                "auto_pad",
                "SAME_LOWER"));
        check(m);
        ModelWriter bad = new ModelWriter("conv_t_big", 13).input("x", 1L, 2L, 4L, 5L);
        bad.output(bad.node(
                "ConvTranspose",
                new String[] {"x", bad.weight("w", 1, 0.3, 2, 3, 3, 3)},
                "y",
                "output_shape",
                new long[] {7, 7}));
        assertThatThrownBy(() -> OnnxImporter.fromModel(bad.build(), Map.of()))
                .isInstanceOf(KilnException.class)
                .hasMessageContaining("(ConvTranspose)")
                .hasMessageContaining("raise output_padding");
    }

    @Test
    void pools1dAnd3dDilatedAndGlobalMax() {
        ModelWriter m = new ModelWriter("pools_nd", 19)
                .input("s", "batch", 3L, 11L)
                .input("v", "batch", 2L, 5L, 6L, 7L)
                .input("x", "batch", 3L, 9L, 10L);
        m.output(m.node(
                "MaxPool", new String[] {"s"}, "max1d", "kernel_shape", new long[] {3}, "strides", new long[] {2}));
        m.output(m.node(
                "AveragePool",
                new String[] {"s"},
                "avg1d_ceil",
                "kernel_shape",
                new long[] {4},
                "strides",
                new long[] {3},
                "pads",
                new long[] {1, 0},
                "ceil_mode",
                1L));
        m.output(m.node(
                "MaxPool",
                new String[] {"v"},
                "max3d",
                "kernel_shape",
                new long[] {2, 3, 2},
                "strides",
                new long[] {1, 2, 2},
                "pads",
                new long[] {0, 1, 0, 1, 1, 1}));
        m.output(m.node(
                "AveragePool",
                new String[] {"v"},
                "avg3d_same",
                "kernel_shape",
                new long[] {3, 3, 3},
                "strides",
                new long[] {2, 2, 2},
                "auto_pad",
                "SAME_LOWER"));
        m.output(m.node(
                "MaxPool",
                new String[] {"x"},
                "max_dilated",
                "kernel_shape",
                new long[] {3, 2},
                "dilations",
                new long[] {2, 3},
                "pads",
                new long[] {1, 1, 1, 1}));
        m.output(m.node(
                "AveragePool",
                new String[] {"x"},
                "avg_dilated",
                "kernel_shape",
                new long[] {2, 2},
                "dilations",
                new long[] {2, 2},
                "strides",
                new long[] {2, 1},
                "pads",
                new long[] {1, 0, 0, 1}));
        m.output(m.node("GlobalMaxPool", new String[] {"x"}, "gmax"));
        m.output(m.node("GlobalMaxPool", new String[] {"s"}, "gmax1d"));
        m.output(m.node("GlobalAveragePool", new String[] {"v"}, "gavg3d"));
        Graph g = check(m);
        assertThat(g.nodes().stream().map(n -> n.op().kind()))
                .contains("max_pool1d", "avg_pool1d", "max_pool3d", "avg_pool3d", "global_max_pool", "global_avg_pool");
    }
}
