package dev.kiln.samples.onnx;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kiln.graph.Graph;
import dev.kiln.onnx.ModelWriter;
import dev.kiln.onnx.proto.Onnx.TensorProto;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Shape and data-movement operators, folded at import or run, checked against ONNX Runtime (exact up to 1e-6). */
class OnnxShapeOpsTest {
    static final double RTOL = 1e-6, ATOL = 1e-6;

    static Graph check(ModelWriter m) {
        return OnnxCheck.check(m, Map.of("batch", 2L), RTOL, ATOL, true);
    }

    @Test
    void shapeArithmeticFoldsAtImport() {
        // reshape x [batch, 6, 4] to [batch, 24] through Shape -> Gather -> Unsqueeze -> Concat, and a Cast and a
        // Constant
        ModelWriter m = new ModelWriter("fold", 13).input("x", "batch", 6L, 4L);
        String sh = m.node("Shape", new String[] {"x"}, "sh");
        String n0 = m.node("Gather", new String[] {sh, m.longs("i0", new long[] {0}, new long[] {})}, "n0");
        String n1 = m.node("Unsqueeze", new String[] {n0, m.longs("ax", 0)}, "n1");
        String c = m.node(
                "Constant",
                new String[] {},
                "c",
                "value",
                TensorProto.newBuilder()
                        .setDataType(TensorProto.DataType.INT64_VALUE)
                        .addDims(1)
                        .addInt64Data(-1)
                        .build());
        String t = m.node(
                "Concat", new String[] {n1, m.node("Cast", new String[] {c}, "c64", "to", 7L)}, "target", "axis", 0L);
        m.node("Reshape", new String[] {"x", t}, "y");
        Graph g = check(m.output("y"));
        assertThat(g.nodes()).hasSize(1);
        assertThat(g.nodes().getFirst().op().kind()).isEqualTo("reshape");
    }

    @Test
    void constantOfShapeFoldsToAWeight() {
        ModelWriter m = new ModelWriter("cos", 17).input("x", "batch", 3L);
        String half = m.node(
                "ConstantOfShape",
                new String[] {m.node("Shape", new String[] {"x"}, "sh")},
                "half",
                "value",
                TensorProto.newBuilder()
                        .setDataType(TensorProto.DataType.FLOAT_VALUE)
                        .addDims(1)
                        .addFloatData(0.5f)
                        .build());
        m.node("Add", new String[] {"x", half}, "y");
        Graph g = check(m.output("y"));
        assertThat(g.constants()).hasSize(1);
    }

    @Test
    void movementOps() {
        ModelWriter m = new ModelWriter("move", 13).input("x", "batch", 6L, 4L);
        String r = m.node("Relu", new String[] {"x"}, "r");
        m.output(m.node("Transpose", new String[] {r}, "t"));
        String u = m.node("Unsqueeze", new String[] {r, m.longs("a1", 1)}, "u");
        String sq = m.node("Squeeze", new String[] {u, m.longs("a2", 1)}, "sq");
        m.output(m.node("Unsqueeze", new String[] {sq, m.longs("a3", -1)}, "u2"));
        m.output(m.node("Squeeze", new String[] {u}, "sq_all"));
        m.output(m.node("Concat", new String[] {r, "x"}, "cat", "axis", -1L));
        m.node("Split", new String[] {r, m.longs("parts", 2, 4)}, new String[] {"s0", "s1"}, "axis", 1L);
        m.output("s0").output("s1");
        m.output(m.node(
                "Slice",
                new String[] {r, m.longs("st", 5, 0), m.longs("en", -100, 4), m.longs("axs", 1, 2), m.longs("sp", -2, 3)
                },
                "sl"));
        m.output(m.node("Gather", new String[] {r, m.longs("one", new long[] {1}, new long[] {})}, "g1", "axis", 1L));
        m.output(m.node("Gather", new String[] {r, m.longs("run", 1, 2)}, "g2", "axis", 2L));
        m.output(m.node("Identity", new String[] {m.node("Dropout", new String[] {r}, "d")}, "id"));
        check(m);
    }
}
