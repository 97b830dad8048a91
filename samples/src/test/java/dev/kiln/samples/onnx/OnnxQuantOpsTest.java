package dev.kiln.samples.onnx;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kiln.graph.Graph;
import dev.kiln.ir.DType;
import dev.kiln.ir.KilnException;
import dev.kiln.onnx.ModelWriter;
import dev.kiln.onnx.OnnxImporter;
import dev.kiln.onnx.OnnxZoo;
import dev.kiln.onnx.proto.Onnx.TensorProto;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The int8 family and Cast against ONNX Runtime: integer outputs must match exactly; float outputs
 * computed from integers (DequantizeLinear, Cast) are exact too, so they are checked with rtol 1e-6.
 */
class OnnxQuantOpsTest {
    static final double RTOL = 1e-6, ATOL = 0;

    static Graph check(ModelWriter m) {
        return OnnxCheck.check(m, Map.of("batch", 2L), RTOL, ATOL, true);
    }

    /** Values that exercise round-half-to-even and saturation, fed through a computed x (x * 0 + edge). */
    private static String edges(ModelWriter m, float... v) {
        String zero = m.node("Mul", new String[] {"x", m.floats("zeros", new float[] {0f})}, "x0");
        return m.node("Add", new String[] {zero, m.floats("edges", v, v.length)}, "edge_values");
    }

    @Test
    void quantizeRoundsHalfToEvenAndSaturates() {
        float[] v = {
            0.5f,
            1.5f,
            2.5f,
            -0.5f,
            -1.5f,
            -2.5f,
            126.5f,
            127.5f,
            128.5f,
            -127.5f,
            -128.5f,
            -129.5f,
            1e6f,
            -1e6f,
            0.49999997f,
            3.7f
        };
        ModelWriter m = new ModelWriter("quantize", 21).input("x", "batch", (long) v.length);
        String e = edges(m, v);
        String one = m.floats("one", new float[] {1f});
        m.output(
                m.node("QuantizeLinear", new String[] {e, one, m.ints("z8", DType.INT8, new long[] {0})}, "q_int8"),
                DType.INT8);
        m.output(
                m.node(
                        "QuantizeLinear",
                        new String[] {e, one, m.ints("zu8", DType.UINT8, new long[] {128})},
                        "q_uint8"),
                DType.UINT8);
        m.output(
                m.node("QuantizeLinear", new String[] {e, m.floats("half", new float[] {0.5f})}, "q_default"),
                DType.UINT8);
        m.output(
                m.node(
                        "QuantizeLinear",
                        new String[] {"x", m.floats("s", new float[] {0.01f}), m.ints("z", DType.INT8, new long[] {-3})
                        },
                        "q_x"),
                DType.INT8);
        check(m);
    }

    @Test
    void perAxisQuantizeAndDequantize() {
        ModelWriter m = new ModelWriter("per_axis", 21)
                .input("x", "batch", 4L, 6L)
                .input("q", DType.INT8, "batch", 3L, 5L)
                .input("u", DType.UINT8, "batch", 5L);
        String s4 = m.uniform("s4", 1, 0.005, 0.02, 4);
        m.output(
                m.node(
                        "QuantizeLinear",
                        new String[] {"x", s4, m.randomInts("z4", DType.INT8, 2, -10, 10, 4)},
                        "qx",
                        "axis",
                        1L),
                DType.INT8);
        m.output(m.node(
                "DequantizeLinear",
                new String[] {"q", m.uniform("s5", 3, 0.01, 0.1, 5), m.randomInts("z5", DType.INT8, 4, -5, 5, 5)},
                "dq",
                "axis",
                -1L));
        m.output(m.node(
                "DequantizeLinear",
                new String[] {"u", m.floats("su", new float[] {0.25f}), m.ints("zu", DType.UINT8, new long[] {77})},
                "du"));
        m.output(m.node("DequantizeLinear", new String[] {"u", m.floats("su2", new float[] {0.5f})}, "du0"));
        check(m);
    }

    @Test
    void constantQuantizeAndDequantizeFoldAtImport() {
        ModelWriter m = new ModelWriter("folded", 21).input("x", "batch", 3L, 4L);
        String wq = m.randomInts("w_q", DType.INT8, 5, -128, 127, 3, 4);
        String w = m.node(
                "DequantizeLinear",
                new String[] {wq, m.uniform("ws", 6, 0.01, 0.02, 4), m.randomInts("wz", DType.INT8, 7, -4, 4, 4)},
                "w",
                "axis",
                1L);
        String rq = m.node(
                "QuantizeLinear",
                new String[] {w, m.floats("rs", new float[] {0.003f}), m.ints("rz", DType.INT8, new long[] {1})},
                "w_rq");
        String back = m.node(
                "DequantizeLinear",
                new String[] {rq, m.floats("rs2", new float[] {0.003f}), m.ints("rz2", DType.INT8, new long[] {1})},
                "w_back");
        m.output(m.node("Add", new String[] {"x", back}, "y"));
        Graph g = check(m);
        assertThat(g.nodes()).as("the weight chain folds to a constant").hasSize(1);
    }

    @Test
    void blockedWeightsFoldAtImport() {
        ModelWriter m = new ModelWriter("blocked", 21).input("x", "batch", 10L);
        // [10, 6] int8 weights in blocks of 4 rows (the last block holds 2): scales [3, 6]
        String w = m.node(
                "DequantizeLinear",
                new String[] {
                    m.randomInts("w_q", DType.INT8, 1, -128, 127, 10, 6),
                    m.uniform("ws", 2, 0.01, 0.03, 3, 6),
                    m.randomInts("wz", DType.INT8, 3, -5, 5, 3, 6)
                },
                "w",
                "axis",
                0L,
                "block_size",
                4L);
        String y = m.node("MatMul", new String[] {"x", w}, "y");
        // a float constant quantised and dequantised in blocks of 3 columns along axis 1 (uint8, no zero point)
        String c = m.uniform("c", 4, -1, 1, 2, 6);
        String cs = m.uniform("cs", 5, 0.005, 0.01, 2, 2);
        String cq = m.node(
                "QuantizeLinear",
                new String[] {c, cs, m.ints("cz", DType.UINT8, new long[] {128, 120, 130, 127}, 2, 2)},
                "cq",
                "axis",
                1L,
                "block_size",
                3L);
        String cd = m.node(
                "DequantizeLinear",
                new String[] {cq, cs, m.ints("cz2", DType.UINT8, new long[] {128, 120, 130, 127}, 2, 2)},
                "cd",
                "axis",
                1L,
                "block_size",
                3L);
        m.output(m.node("Add", new String[] {y, cd}, "out"));
        // the folded weights are exact; the float matmul over them sums in another order than ONNX Runtime
        Graph g = OnnxCheck.check(m, Map.of("batch", 2L), 1e-5, 1e-7, true);
        assertThat(g.nodes().stream().map(n -> n.op().kind())).doesNotContain("dequantize", "quantize");
        ModelWriter bad = new ModelWriter("blocked_bad", 21).input("x", 2L, 4L);
        bad.node(
                "DequantizeLinear",
                new String[] {bad.randomInts("q", DType.INT8, 1, -9, 9, 8, 4), bad.weight("s", 2, 1, 3, 4)},
                "y",
                "axis",
                0L,
                "block_size",
                4L);
        assertThatThrownBy(() -> OnnxImporter.fromModel(bad.output("y").build(), Map.of()))
                .isInstanceOf(KilnException.class)
                .hasMessageContaining("must have shape [2, 4], got [3, 4]");
    }

    @Test
    void qlinearMatmulAndMatmulInteger() {
        ModelWriter m = new ModelWriter("qmatmul", 21)
                .input("a", DType.UINT8, "batch", 3L, 8L)
                .input("b", DType.UINT8, 8L, 5L)
                .input("c", DType.INT8, "batch", 8L);
        String az = m.ints("az", DType.UINT8, new long[] {120}), as = m.floats("as", new float[] {0.02f});
        String w = m.randomInts("w", DType.INT8, 1, -63, 63, 8, 5);
        m.output(
                m.node(
                        "QLinearMatMul",
                        new String[] {
                            "a",
                            as,
                            az,
                            w,
                            m.floats("ws", new float[] {0.01f}),
                            m.ints("wz", DType.INT8, new long[] {3}),
                            m.floats("ys", new float[] {0.05f}),
                            m.ints("yz", DType.UINT8, new long[] {250})
                        },
                        "y_tensor"),
                DType.UINT8);
        m.output(
                m.node(
                        "QLinearMatMul",
                        new String[] {
                            "c",
                            as,
                            m.ints("cz", DType.INT8, new long[] {-5}),
                            w,
                            m.floats("ws3", new float[] {0.01f}),
                            m.ints("wz3", DType.INT8, new long[] {0}),
                            m.floats("ys3", new float[] {0.02f}),
                            m.ints("yz3", DType.INT8, new long[] {-7})
                        },
                        "y_signed"),
                DType.INT8);
        m.output(
                m.node(
                        "QLinearMatMul",
                        new String[] {
                            "a",
                            as,
                            az,
                            w,
                            m.uniform("wsc", 2, 0.005, 0.02, 5),
                            m.ints("wzc", DType.INT8, new long[5], 5),
                            m.floats("ys2", new float[] {0.1f}),
                            m.ints("yz2", DType.UINT8, new long[] {128})
                        },
                        "y_column"),
                DType.UINT8);
        m.output(
                m.node(
                        "MatMulInteger",
                        new String[] {"a", w, az, m.randomInts("wzi", DType.INT8, 3, -3, 3, 5)},
                        "acc_const"),
                DType.INT32);
        m.output(m.node("MatMulInteger", new String[] {"a", "b"}, "acc_computed"), DType.INT32);
        check(m);
    }

    @Test
    void batchedIntegerMatmuls() {
        ModelWriter m = new ModelWriter("qbatched", 21)
                .input("a", DType.UINT8, "batch", 2L, 3L, 8L)
                .input("b", DType.INT8, "batch", 2L, 8L, 5L);
        String az = m.ints("az", DType.UINT8, new long[] {120});
        m.output(
                m.node("MatMulInteger", new String[] {"a", "b", az, m.ints("bz", DType.INT8, new long[] {-3})}, "acc"),
                DType.INT32);
        m.output(
                m.node(
                        "MatMulInteger",
                        new String[] {"a", m.randomInts("w", DType.INT8, 4, -100, 100, 2, 2, 8, 5)},
                        "acc_const"),
                DType.INT32);
        m.output(
                m.node(
                        "QLinearMatMul",
                        new String[] {
                            "a",
                            m.floats("as", new float[] {0.02f}),
                            az,
                            "b",
                            m.floats("bs", new float[] {0.01f}),
                            m.ints("bz2", DType.INT8, new long[] {2}),
                            m.floats("ys", new float[] {0.05f}),
                            m.ints("yz", DType.UINT8, new long[] {128})
                        },
                        "y"),
                DType.UINT8);
        check(m);
    }

    /** A [2, 3, 3, 8] uint8 activation and a [2, 3, 8, 5] B: zero points and scales per batch and column. */
    private static ModelWriter perBatchModel(String name, boolean kilnOnlyShapes) {
        ModelWriter m = new ModelWriter(name, 21)
                .input("a", DType.UINT8, 2L, 3L, 3L, 8L)
                .input("b", DType.INT8, 2L, 3L, 8L, 5L);
        String az = m.ints("az", DType.UINT8, new long[] {117});
        // ONNX Runtime takes [2, 3, 1, 5] (B's batch extents, one row); Kiln also takes [5] and [3, 1, 5]
        long[] perColumn = {-4, 0, 3, 7, -1};
        String colZp = kilnOnlyShapes
                ? m.ints("bz_col", DType.INT8, perColumn, 5)
                : m.ints("bz_col", DType.INT8, tile(perColumn, 6), 2, 3, 1, 5);
        m.output(m.node("MatMulInteger", new String[] {"a", "b", az, colZp}, "acc_column"), DType.INT32);
        String batchZp = m.randomInts("bz_batch", DType.INT8, 11, -9, 9, 2, 3, 1, 5);
        m.output(m.node("MatMulInteger", new String[] {"a", "b", az, batchZp}, "acc_batch"), DType.INT32);
        String wu = m.randomInts("wu", DType.UINT8, 12, 0, 255, 2, 3, 8, 5);
        String wz = m.randomInts("wz", DType.UINT8, 13, 100, 156, 2, 3, 1, 5);
        m.output(m.node("MatMulInteger", new String[] {"a", wu, az, wz}, "acc_const"), DType.INT32);
        long[] perMiddle = {5, -5, 2};
        String midScale = kilnOnlyShapes
                ? m.floats("bs_mid", new float[] {0.011f, 0.007f, 0.013f}, 3, 1, 1)
                : m.floats(
                        "bs_mid",
                        new float[] {
                            0.011f, 0.011f, 0.011f, 0.011f, 0.011f, 0.007f, 0.007f, 0.007f, 0.007f, 0.007f, 0.013f,
                            0.013f, 0.013f, 0.013f, 0.013f, 0.011f, 0.011f, 0.011f, 0.011f, 0.011f, 0.007f, 0.007f,
                            0.007f, 0.007f, 0.007f, 0.013f, 0.013f, 0.013f, 0.013f, 0.013f
                        },
                        2,
                        3,
                        1,
                        5);
        m.output(
                m.node(
                        "QLinearMatMul",
                        new String[] {
                            "a",
                            m.floats("as", new float[] {0.02f}),
                            az,
                            "b",
                            m.uniform("bs", 14, 0.004, 0.02, 2, 3, 1, 5),
                            m.randomInts("bz_q", DType.INT8, 15, -6, 6, 2, 3, 1, 5),
                            m.floats("ys", new float[] {0.09f}),
                            m.ints("yz", DType.UINT8, new long[] {128})
                        },
                        "y_batch"),
                DType.UINT8);
        String midZp = kilnOnlyShapes
                ? m.ints("bz_mid", DType.INT8, perMiddle, 3, 1, 1)
                : m.ints("bz_mid", DType.INT8, repeatEach(perMiddle, 5, 2), 2, 3, 1, 5);
        m.output(
                m.node(
                        "QLinearMatMul",
                        new String[] {
                            "a",
                            m.floats("as2", new float[] {0.015f}),
                            az,
                            "b",
                            midScale,
                            midZp,
                            m.floats("ys2", new float[] {0.07f}),
                            m.ints("yz2", DType.UINT8, new long[] {120})
                        },
                        "y_middle"),
                DType.UINT8);
        return m;
    }

    private static long[] tile(long[] v, int times) {
        long[] out = new long[v.length * times];
        for (int i = 0; i < out.length; i++) out[i] = v[i % v.length];
        return out;
    }

    /** Each value {@code each} times, the whole {@code times} times: [a a b b] twice for each 2, times 2. */
    private static long[] repeatEach(long[] v, int each, int times) {
        long[] out = new long[v.length * each * times];
        for (int i = 0; i < out.length; i++) out[i] = v[i / each % v.length];
        return out;
    }

    @Test
    void batchedBWithZeroPointsAndScalesPerBatchAndColumn() {
        // the shapes ONNX Runtime takes, checked against it
        check(perBatchModel("qbatch_zp", false));
        // the broadcasting shapes only Kiln takes ([N], [3, 1, 1]), against ONNX Runtime on the same values tiled
        ModelWriter kiln = perBatchModel("qbatch_zp_kiln", true);
        OnnxCheck.checkAgainst(perBatchModel("qbatch_zp", false), kiln, Map.of(), RTOL, ATOL);
        assertThatThrownBy(() -> OnnxCheck.check(kiln, Map.of(), RTOL, ATOL, false))
                .as("ONNX Runtime refuses a [N] zero point or a [3, 1, 1] scale for a batched B")
                .hasMessageContaining("ONNX Runtime failed on the model")
                .hasMessageContaining("IsBQuantParamSupported");
    }

    @Test
    void twoDimensionalBTakesRowShapedColumnParameters() {
        ModelWriter m = new ModelWriter("q2d_row", 21).input("a", DType.UINT8, "batch", 4L, 8L);
        String w = m.randomInts("w", DType.INT8, 1, -100, 100, 8, 6);
        String az = m.ints("az", DType.UINT8, new long[] {128});
        m.output(
                m.node("MatMulInteger", new String[] {"a", w, az, m.randomInts("wz", DType.INT8, 2, -5, 5, 1, 6)}, "i"),
                DType.INT32);
        m.output(
                m.node(
                        "QLinearMatMul",
                        new String[] {
                            "a",
                            m.floats("as", new float[] {0.03f}),
                            az,
                            w,
                            m.uniform("ws", 3, 0.002, 0.01, 1, 6),
                            m.randomInts("wz2", DType.INT8, 4, -3, 3, 1, 6),
                            m.floats("ys", new float[] {0.04f}),
                            m.ints("yz", DType.UINT8, new long[] {127})
                        },
                        "q"),
                DType.UINT8);
        check(m);
        ModelWriter bad = new ModelWriter("q2d_bad", 21).input("a", DType.UINT8, 4L, 8L);
        bad.node(
                "MatMulInteger",
                new String[] {
                    "a",
                    w(bad),
                    bad.ints("az", DType.UINT8, new long[] {1}),
                    bad.randomInts("wz", DType.INT8, 2, -5, 5, 8, 6)
                },
                "i");
        assertThatThrownBy(() ->
                        OnnxImporter.fromModel(bad.output("i", DType.INT32).build(), Map.of()))
                .isInstanceOf(KilnException.class)
                .hasMessageContaining("node 'matmulinteger_1' (MatMulInteger)")
                .hasMessageContaining("b_zero_point must be a scalar, one value per column of B ([6] or [1, 6]), got "
                        + "shape [8, 6]");
    }

    private static String w(ModelWriter m) {
        return m.randomInts("w", DType.INT8, 1, -100, 100, 8, 6);
    }

    @Test
    void perRowQuantisationOfAIsRefusedByKilnAndOnnxRuntime() {
        ModelWriter m = new ModelWriter("q_row_a", 21).input("a", DType.UINT8, 3L, 8L);
        m.node(
                "QLinearMatMul",
                new String[] {
                    "a",
                    m.floats("as", new float[] {0.02f, 0.03f, 0.04f}, 3),
                    m.ints("az", DType.UINT8, new long[] {128}),
                    m.randomInts("w", DType.INT8, 1, -100, 100, 8, 6),
                    m.floats("ws", new float[] {0.01f}),
                    m.ints("wz", DType.INT8, new long[] {0}),
                    m.floats("ys", new float[] {0.05f}),
                    m.ints("yz", DType.UINT8, new long[] {128})
                },
                "y");
        m.output("y", DType.UINT8);
        assertThatThrownBy(() -> OnnxImporter.fromModel(m.build(), Map.of()))
                .isInstanceOf(KilnException.class)
                .hasMessageContaining("node 'qlinearmatmul_1' (QLinearMatMul)")
                .hasMessageContaining("a_scale and a_zero_point must be scalars (per-row quantisation of A is not "
                        + "supported; ONNX Runtime refuses it too), got shapes [3] and []");
        ModelWriter scalar = new ModelWriter("q_row_a_ort", 21).input("a", DType.UINT8, 3L, 8L);
        // the same node, imported by Kiln with a scalar A scale, so that OnnxCheck can ask ONNX Runtime about m
        scalar.node(
                "QLinearMatMul",
                new String[] {
                    "a",
                    scalar.floats("as", new float[] {0.02f}),
                    scalar.ints("az", DType.UINT8, new long[] {128}),
                    scalar.randomInts("w", DType.INT8, 1, -100, 100, 8, 6),
                    scalar.floats("ws", new float[] {0.01f}),
                    scalar.ints("wz", DType.INT8, new long[] {0}),
                    scalar.floats("ys", new float[] {0.05f}),
                    scalar.ints("yz", DType.UINT8, new long[] {128})
                },
                "y");
        scalar.output("y", DType.UINT8);
        assertThatThrownBy(() -> OnnxCheck.checkAgainst(m, scalar, Map.of(), RTOL, ATOL))
                .hasMessageContaining("ONNX Runtime failed on the model")
                .hasMessageContaining("input scale must be a scalar or 1D tensor of size 1");
    }

    @Test
    void castBetweenFloatAndIntegerTypes() {
        ModelWriter m = new ModelWriter("cast", 21)
                .input("x", "batch", 6L)
                .input("i", DType.INT32, "batch", 6L)
                .input("q", DType.INT8, "batch", 6L);
        String x100 = m.node("Mul", new String[] {"x", m.floats("hundred", new float[] {100f})}, "x100");
        m.output(
                m.node("Cast", new String[] {x100}, "to_int32", "to", (long) TensorProto.DataType.INT32_VALUE),
                DType.INT32);
        m.output(
                m.node("Cast", new String[] {x100}, "to_int64", "to", (long) TensorProto.DataType.INT64_VALUE),
                DType.INT64);
        m.output(m.node("Cast", new String[] {"q"}, "int8_to_float", "to", (long) TensorProto.DataType.FLOAT_VALUE));
        m.output(m.node("Cast", new String[] {"i"}, "int32_to_float", "to", (long) TensorProto.DataType.FLOAT_VALUE));
        String big = m.node("Mul", new String[] {"i", m.ints("k", DType.INT32, new long[] {3})}, "i3");
        m.output(
                m.node("Cast", new String[] {big}, "int32_to_int8", "to", (long) TensorProto.DataType.INT8_VALUE),
                DType.INT8);
        m.output(
                m.node("Cast", new String[] {"x"}, "to_bool", "to", (long) TensorProto.DataType.BOOL_VALUE),
                DType.BOOL);
        OnnxCheck.check(m, Map.of("batch", 2L), RTOL, ATOL, true, Map.of("i", new long[] {-100, 100}));
    }

    @Test
    void quantizedMlpFromTheZoo() {
        OnnxCheck.check(OnnxZoo.quantizedMlp("qmlp", 48, 64, 10, 3), Map.of("batch", 4L), RTOL, ATOL, true);
    }

    @Test
    void badQuantisationNodesAreNamed() {
        ModelWriter m = new ModelWriter("bad", 21).input("x", 2L, 4L);
        m.node("QuantizeLinear", new String[] {"x", m.floats("s", new float[] {0.1f})}, "y", "block_size", 2L);
        assertThatThrownBy(
                        () -> OnnxImporter.fromModel(m.output("y", DType.UINT8).build(), Map.of()))
                .isInstanceOf(KilnException.class)
                .hasMessageContaining("node 'quantizelinear_1' (QuantizeLinear)")
                .hasMessageContaining("block_size");
        ModelWriter m2 = new ModelWriter("bad", 21).input("x", 2L, 4L);
        m2.node("QuantizeLinear", new String[] {"x", m2.node("Relu", new String[] {"x"}, "ax")}, "y");
        assertThatThrownBy(
                        () -> OnnxImporter.fromModel(m2.output("y", DType.UINT8).build(), Map.of()))
                .isInstanceOf(KilnException.class);
        ModelWriter m3 = new ModelWriter("bad", 21).input("x", 2L, 4L);
        m3.node(
                "QuantizeLinear",
                new String[] {"x", m3.weight("s3", 1, 1, 3), m3.ints("z3", DType.INT8, new long[3], 3)},
                "y",
                "axis",
                1L);
        assertThatThrownBy(
                        () -> OnnxImporter.fromModel(m3.output("y", DType.INT8).build(), Map.of()))
                .hasMessageContaining("node 'quantizelinear_1' (QuantizeLinear)")
                .hasMessageContaining("does not match axis 1");
        ModelWriter m4 = new ModelWriter("bad", 21).input("x", 2L, 4L);
        m4.node(
                "QuantizeLinear",
                new String[] {"x", m4.floats("s4", new float[] {0.1f}), m4.floats("z4", new float[] {0f})},
                "y");
        assertThatThrownBy(
                        () -> OnnxImporter.fromModel(m4.output("y", DType.INT8).build(), Map.of()))
                .hasMessageContaining("node 'quantizelinear_1' (QuantizeLinear)")
                .hasMessageContaining("y_zero_point must be int8");
    }
}
