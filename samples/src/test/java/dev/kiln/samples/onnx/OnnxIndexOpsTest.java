package dev.kiln.samples.onnx;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kiln.graph.Graph;
import dev.kiln.ir.DType;
import dev.kiln.ir.KilnException;
import dev.kiln.onnx.ModelWriter;
import dev.kiln.onnx.OnnxImporter;
import dev.kiln.onnx.proto.Onnx.TensorProto;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Range, Expand, Where and external data, each against ONNX Runtime (selection and copies: exact, rtol 1e-6). */
class OnnxIndexOpsTest {
    static final double RTOL = 1e-6, ATOL = 0;

    @Test
    void rangeFoldsAtImport() {
        ModelWriter m = new ModelWriter("range", 17).input("x", "batch", 5L);
        String rf = m.node(
                "Range",
                new String[] {
                    m.floats("f0", new float[] {-1f}),
                    m.floats("f1", new float[] {1.4f}),
                    m.floats("fd", new float[] {0.5f})
                },
                "rf");
        String ri = m.node(
                "Range",
                new String[] {
                    m.longs("i0", new long[] {10}, new long[] {}),
                    m.longs("i1", new long[] {0}, new long[] {}),
                    m.longs("id", new long[] {-2}, new long[] {})
                },
                "ri");
        String rif = m.node("Cast", new String[] {ri}, "rif", "to", (long) TensorProto.DataType.FLOAT_VALUE);
        m.output(m.node("Add", new String[] {m.node("Mul", new String[] {"x", rf}, "xr"), rif}, "y"));
        Graph g = OnnxCheck.check(m, Map.of("batch", 2L), RTOL, ATOL, true);
        assertThat(g.nodes().stream().map(n -> n.op().kind())).containsExactly("multiply", "add");
        ModelWriter bad = new ModelWriter("range", 17).input("x", 1L);
        bad.node(
                "Range", new String[] {"x", bad.floats("l", new float[] {4f}), bad.floats("d", new float[] {1f})}, "r");
        assertThatThrownBy(() -> OnnxImporter.fromModel(bad.output("r").build(), Map.of()))
                .isInstanceOf(KilnException.class)
                .hasMessageContaining("node 'range_1' (Range)")
                .hasMessageContaining("must be a constant known at import");
    }

    @Test
    void expandComputedAndConstant() {
        ModelWriter m =
                new ModelWriter("expand", 17).input("x", "batch", 1L, 4L).input("v", 3L, 1L);
        m.output(m.node("Expand", new String[] {"x", m.longs("s1", 3, 1)}, "ex")); // [batch, 3, 4]
        m.output(m.node("Expand", new String[] {"v", m.longs("s2", 2, 1, 5)}, "ev")); // [2, 3, 5]
        String c = m.node("Expand", new String[] {m.weight("c", 1, 1, 4), m.longs("s3", 3, 4)}, "ec");
        m.output(m.node("Add", new String[] {"v", c}, "vc"));
        OnnxCheck.check(m, Map.of("batch", 2L), RTOL, ATOL, true);
    }

    @Test
    void whereWithBroadcasting() {
        ModelWriter m = new ModelWriter("where", 17)
                .input("c", DType.BOOL, "batch", 4L)
                .input("x", "batch", 4L)
                .input("i", DType.INT64, "batch", 1L);
        m.output(m.node("Where", new String[] {"c", "x", m.weight("y", 1, 1, 4)}, "w"));
        m.output(m.node("Where", new String[] {"c", "i", m.longs("k", 7, 8, 9, 10)}, "wi"), DType.INT64);
        OnnxCheck.check(m, Map.of("batch", 3L), RTOL, ATOL, true);
    }

    @Test
    void externalDataNextToTheModel(@TempDir Path dir) throws Exception {
        ModelWriter m = new ModelWriter("external", 17).input("x", "batch", 32L);
        String h = m.node(
                "Relu",
                new String[] {
                    m.node(
                            "Gemm",
                            new String[] {"x", m.weight("w1", 1, 0.2, 32, 64), m.weight("b1", 2, 0.1, 64)},
                            "fc1")
                },
                "h");
        m.node("MatMul", new String[] {h, m.weight("w2", 3, 0.2, 64, 10)}, "y");
        Path model = m.output("y").writeWithExternalData(dir.resolve("mlp.onnx"), "mlp.onnx.data", 1024);
        assertThat(Files.size(dir.resolve("mlp.onnx.data")))
                .as("w1 and w2 moved out, b1 kept")
                .isEqualTo(4L * (32 * 64 + 64 * 10));
        assertThat(Files.size(model)).isLessThan(1024);
        OnnxCheck.checkFile(model, Map.of("batch", 2L), 1e-5, 1e-6);
        assertThatThrownBy(() -> OnnxImporter.fromModel(
                        m.build().toBuilder()
                                .mergeFrom(Files.readAllBytes(model))
                                .build(),
                        Map.of("batch", 2L)))
                .isInstanceOf(KilnException.class)
                .hasMessageContaining("external file");
        Files.write(dir.resolve("mlp.onnx.data"), new byte[100]);
        assertThatThrownBy(() -> OnnxImporter.load(model, Map.of("batch", 2L)))
                .isInstanceOf(KilnException.class)
                .hasMessageContaining("initializer 'w1'")
                .hasMessageContaining("runs past the end");
    }
}
