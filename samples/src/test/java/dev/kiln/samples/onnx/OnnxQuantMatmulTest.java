package dev.kiln.samples.onnx;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kiln.graph.Graph;
import dev.kiln.ir.DType;
import dev.kiln.onnx.ModelWriter;
import dev.kiln.onnx.OnnxZoo;
import dev.kiln.onnx.proto.Onnx.TensorProto;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * QLinearMatMul and MatMulInteger on the dot-product instructions' layout ({@code matmul_packed}) against ONNX
 * Runtime, every integer output exact: int8 and uint8 activations and weights (shifted to uint8 x int8), K not a
 * multiple of 4, per-column scales; and the products that do not fit it staying on the int32 {@code dense_integer}
 * ({@link OnnxQuantOpsTest} checks those on their own).
 */
class OnnxQuantMatmulTest {
    private static List<String> kinds(Graph g) {
        return g.nodes().stream().map(n -> n.op().kind()).toList();
    }

    /**
     * {@code y = QLinearMatMul(a, w)}, w's zero point its type's middle (0 for int8, 128 for uint8), y of type
     * {@code yt} (ONNX Runtime takes int8 A only with int8 B and y).
     */
    private static String qlinear(
            ModelWriter m, String a, String as, String az, String w, DType wt, String ws, String y, DType yt) {
        String wz = m.ints(y + ".wz", wt, new long[] {wt == DType.UINT8 ? 128 : 0});
        String ys = m.floats(y + ".ys", new float[] {0.08f});
        String yz = m.ints(y + ".yz", yt, new long[] {yt == DType.UINT8 ? 128 : -3});
        return m.node("QLinearMatMul", new String[] {a, as, az, w, ws, wz, ys, yz}, y);
    }

    @Test
    void qlinearMatmulTakesTheDotProductPath() {
        ModelWriter m = new ModelWriter("qmatmul_packed", 21)
                .input("a", DType.UINT8, "batch", 3L, 37L)
                .input("s", DType.INT8, "batch", 37L);
        String as = m.floats("as", new float[] {0.02f});
        String az = m.ints("az", DType.UINT8, new long[] {120}), sz = m.ints("sz", DType.INT8, new long[] {-5});
        String w = m.randomInts("w", DType.INT8, 1, -63, 63, 37, 32);
        String wu = m.randomInts("wu", DType.UINT8, 2, 60, 190, 37, 16);
        // uint8 A (K = 37: padded to 40 with zero weights), per-column scales, a rank-3 A flattened to rows
        m.output(
                qlinear(m, "a", as, az, w, DType.INT8, m.uniform("ws", 3, 0.005, 0.02, 32), "y_column", DType.UINT8),
                DType.UINT8);
        // int8 A shifted to uint8 (its zero point too), per-tensor scale
        m.output(
                qlinear(m, "s", as, sz, w, DType.INT8, m.floats("ws1", new float[] {0.01f}), "y_signed", DType.INT8),
                DType.INT8);
        // a uint8 weight with zero point 128, shifted to int8 with 0
        m.output(
                qlinear(
                        m,
                        "a",
                        as,
                        az,
                        wu,
                        DType.UINT8,
                        m.floats("ws2", new float[] {0.01f}),
                        "y_uint8_weight",
                        DType.UINT8),
                DType.UINT8);
        Graph g = OnnxQuantOpsTest.check(m);
        assertThat(kinds(g))
                .doesNotContain("dense_integer")
                .filteredOn("matmul_packed"::equals)
                .hasSize(3);
    }

    @Test
    void matmulIntegerTakesTheDotProductPath() {
        ModelWriter m = new ModelWriter("matmulinteger_packed", 21).input("a", DType.UINT8, "batch", 64L);
        String w = m.randomInts("w", DType.INT8, 4, -128, 127, 64, 48);
        m.output(
                m.node("MatMulInteger", new String[] {"a", w, m.ints("az", DType.UINT8, new long[] {77})}, "acc"),
                DType.INT32);
        // a_zero_point 0 (absent): no bias node
        m.output(m.node("MatMulInteger", new String[] {"a", w}, "acc_uncentred"), DType.INT32);
        Graph g = OnnxQuantOpsTest.check(m);
        assertThat(kinds(g)).filteredOn("matmul_packed"::equals).hasSize(2);
        assertThat(kinds(g)).filteredOn("bias_add"::equals).hasSize(1);
    }

    @Test
    void whatDoesNotFitStaysInt32() {
        ModelWriter m = new ModelWriter("matmulinteger_int32", 21).input("a", DType.UINT8, "batch", 16L);
        String az = m.ints("az", DType.UINT8, new long[] {3});
        // a weight zero point (int8 other than 0), and 20 columns (not a multiple of 16)
        String w = m.randomInts("w", DType.INT8, 5, -63, 63, 16, 32);
        m.output(
                m.node("MatMulInteger", new String[] {"a", w, az, m.ints("wz", DType.INT8, new long[] {2})}, "acc_wz"),
                DType.INT32);
        String w20 = m.randomInts("w20", DType.INT8, 6, -63, 63, 16, 20);
        m.output(m.node("MatMulInteger", new String[] {"a", w20, az}, "acc_20"), DType.INT32);
        Graph g = OnnxQuantOpsTest.check(m);
        assertThat(kinds(g))
                .doesNotContain("matmul_packed")
                .filteredOn("dense_integer"::equals)
                .hasSize(2);
    }

    @Test
    void dynamicQuantizeLinear() {
        ModelWriter m = new ModelWriter("dynamic_quantize", 21)
                .input("x", "batch", 5L, 33L)
                .input("d", 4L, 6L);
        m.node("DynamicQuantizeLinear", new String[] {"x"}, new String[] {"y", "y_scale", "y_zero"});
        // all >= 0: the range widened to 0, zero point 0
        String r = m.node("Relu", new String[] {"x"}, "r");
        m.node("DynamicQuantizeLinear", new String[] {r}, new String[] {"ry", "ry_scale", "ry_zero"});
        // all 0: scale 1
        String z = m.node("Mul", new String[] {"x", m.floats("zero", new float[] {0f})}, "z");
        m.node("DynamicQuantizeLinear", new String[] {z}, new String[] {"zy", "zy_scale", "zy_zero"});
        for (String p : List.of("", "r", "z"))
            m.output(p + "y", DType.UINT8).output(p + "y_scale").output(p + "y_zero", DType.UINT8);
        // a constant folds at import (its outputs read here through a computed input d)
        String[] c = {"cy", "cs", "cz"};
        m.node("DynamicQuantizeLinear", new String[] {m.weight("c", 7, 3.0, 4, 6)}, c);
        int i = 0;
        for (String v : c) {
            String f = m.node("Cast", new String[] {v}, v + ".f", "to", (long) TensorProto.DataType.FLOAT_VALUE);
            m.output(m.node("Add", new String[] {f, "d"}, "const_" + i++));
        }
        Graph g = OnnxQuantOpsTest.check(m);
        assertThat(kinds(g)).filteredOn("dynamic_qparams"::equals).hasSize(3);
    }

    /**
     * ONNX Runtime's dynamic quantisation of a MatMul: the activation quantised at run time
     * (DynamicQuantizeLinear), MatMulInteger with its computed zero point, the int32 product scaled back to float32
     * by the computed scale times the weight's and the bias added.
     */
    @Test
    void dynamicallyQuantizedMatmul() {
        ModelWriter m = new ModelWriter("dynamic_matmul", 21).input("x", "batch", 4L, 40L);
        m.node("DynamicQuantizeLinear", new String[] {"x"}, new String[] {"xq", "xs", "xz"});
        for (long cols : new long[] {32, 20}) { // 32: the dot-product path; 20: dense_integer
            String p = "fc" + cols;
            String w = m.randomInts(p + ".w", DType.INT8, cols, -63, 63, 40, cols);
            String acc = m.node(
                    "MatMulInteger",
                    new String[] {"xq", w, "xz", m.ints(p + ".wz", DType.INT8, new long[] {0})},
                    p + ".acc");
            String scale = m.node("Mul", new String[] {"xs", m.floats(p + ".ws", new float[] {0.004f})}, p + ".s");
            String f = m.node("Cast", new String[] {acc}, p + ".f", "to", (long) TensorProto.DataType.FLOAT_VALUE);
            String y = m.node("Mul", new String[] {f, scale}, p + ".y");
            m.node("Add", new String[] {y, m.weight(p + ".b", cols + 1, 0.1, cols)}, p);
            m.output(acc, DType.INT32).output(p);
        }
        Graph g = OnnxQuantOpsTest.check(m);
        assertThat(kinds(g))
                .contains("dynamic_qparams", "dense_integer")
                .filteredOn("matmul_packed"::equals)
                .hasSize(1);
    }

    @Test
    void dynamicallyQuantizedBertLayerFromTheZoo() {
        Graph g = OnnxCheck.check(
                OnnxZoo.dynamicQuantizedBertLayer("qbert", 16, 64, 4, 128, 3),
                Map.of("batch", 2L),
                OnnxNetworksTest.RTOL,
                OnnxNetworksTest.ATOL,
                true);
        assertThat(kinds(g))
                .doesNotContain("dense_integer")
                .filteredOn("matmul_packed"::equals)
                .as("the six Linear layers")
                .hasSize(6);
        assertThat(kinds(g))
                .filteredOn("dynamic_qparams"::equals)
                .as("q, k, v share one")
                .hasSize(4);
        // the product's scale back to float32 (times a computed scalar), the bias and GELU run on the matmul's own
        // [rows, N] (a view of ONNX's [batch, seq, N]), so they fuse into it: no reshape between them
        assertThat(g.nodes()).filteredOn(n -> n.op().kind().equals("reshape")).noneMatch(n -> n.inputs().stream()
                .anyMatch(i -> i.endsWith(".mm_f") || i.endsWith(".scale")));
    }
}
