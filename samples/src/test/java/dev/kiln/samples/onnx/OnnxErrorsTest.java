package dev.kiln.samples.onnx;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kiln.ir.KilnException;
import dev.kiln.onnx.ModelWriter;
import dev.kiln.onnx.OnnxImporter;
import dev.kiln.onnx.OnnxZoo;
import dev.kiln.onnx.proto.Onnx.ModelProto;
import dev.kiln.onnx.proto.Onnx.OperatorSetIdProto;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Bad models: each error names the node (name and op type) or the tensor, and what is missing. */
class OnnxErrorsTest {

    private static ModelWriter relu(int opset) {
        ModelWriter m = new ModelWriter("bad", opset).input("x", "batch", 4L);
        m.node("Relu", new String[] {"x"}, "y");
        return m.output("y");
    }

    @Test
    void unsupportedOperatorNamesNodeAndOp() {
        ModelWriter m = new ModelWriter("bad", 13).input("x", 2L, 4L);
        m.node("Hardmax", new String[] {"x"}, "y");
        assertThatThrownBy(() -> OnnxImporter.fromModel(m.output("y").build(), Map.of()))
                .isInstanceOf(KilnException.class)
                .hasMessageContaining("node 'hardmax_1' (Hardmax)")
                .hasMessageContaining("operator 'Hardmax' is not supported");
    }

    @Test
    void unsupportedAttributeAndAttributeValue() {
        ModelWriter m = new ModelWriter("bad", 13).input("x", 1L, 1L, 7L, 7L);
        m.node(
                "AveragePool",
                new String[] {"x"},
                "y",
                "kernel_shape",
                new long[] {2, 2},
                "strides",
                new long[] {2, 2},
                "ceil_mode",
                1L,
                "count_include_pad",
                1L);
        assertThatThrownBy(() -> OnnxImporter.fromModel(m.output("y").build(), Map.of()))
                .hasMessageContaining("node 'averagepool_1' (AveragePool)")
                .hasMessageContaining("ceil_mode = 1 with count_include_pad = 1");
        ModelWriter m2 = new ModelWriter("bad", 13).input("x", 2L, 4L);
        m2.node("Softmax", new String[] {"x"}, "y", "axis", 1L, "flavour", "strange");
        assertThatThrownBy(() -> OnnxImporter.fromModel(m2.output("y").build(), Map.of()))
                .hasMessageContaining("(Softmax)")
                .hasMessageContaining("attribute 'flavour' is not supported");
    }

    @Test
    void opsetOutOfRangeAndForeignDomain() {
        assertThatThrownBy(() -> OnnxImporter.fromModel(relu(12).build(), Map.of("batch", 1L)))
                .hasMessageContaining("opset 12 is not supported")
                .hasMessageContaining("13 to 21");
        ModelProto foreign = relu(13).build().toBuilder()
                .clearOpsetImport()
                .addOpsetImport(OperatorSetIdProto.newBuilder()
                        .setDomain("com.microsoft")
                        .setVersion(1))
                .build();
        assertThatThrownBy(() -> OnnxImporter.fromModel(foreign, Map.of("batch", 1L)))
                .hasMessageContaining("no opset of ONNX's default domain");
    }

    @Test
    void unboundSymbolicBatchSaysHowToBindIt() {
        assertThatThrownBy(() -> OnnxImporter.fromModel(relu(13).build(), Map.of()))
                .hasMessageContaining("graph input 'x': axis 0 is symbolic ('batch')")
                .hasMessageContaining("Map.of(\"batch\", 1L)");
    }

    @Test
    void shapeMismatchNamesTheNode() {
        ModelWriter m = new ModelWriter("bad", 13).input("x", 2L, 4L);
        m.node("MatMul", new String[] {"x", m.weight("w", 1, 1, 5, 3)}, "y");
        assertThatThrownBy(() -> OnnxImporter.fromModel(m.output("y").build(), Map.of()))
                .hasMessageContaining("node 'matmul_1' (MatMul)")
                .hasMessageContaining("inner extents differ");
        ModelWriter r = new ModelWriter("bad", 13).input("x", 2L, 4L);
        r.node("Reshape", new String[] {"x", r.longs("s", 3, -1)}, "y");
        assertThatThrownBy(() -> OnnxImporter.fromModel(r.output("y").build(), Map.of()))
                .hasMessageContaining("(Reshape)")
                .hasMessageContaining("cannot reshape [2, 4] to [3, -1]");
    }

    @Test
    void computedShapeInputIsRefused() {
        ModelWriter m = new ModelWriter("bad", 13).input("x", 2L, 4L).input("s", 2L);
        m.node("Reshape", new String[] {"x", "s"}, "y");
        assertThatThrownBy(() -> OnnxImporter.fromModel(m.output("y").build(), Map.of()))
                .hasMessageContaining("input 1 (shape, 's') must be a constant known at import");
    }

    @Test
    void malformedAndTruncatedFilesSayWhere(@TempDir Path dir) throws Exception {
        Path junk = Files.write(dir.resolve("junk.onnx"), new byte[] {0x0a, (byte) 0xff, 0x01, 0x02});
        assertThatThrownBy(() -> OnnxImporter.load(junk, Map.of()))
                .isInstanceOf(KilnException.class)
                .hasMessageContaining("junk.onnx")
                .hasMessageContaining("is not an ONNX model");
        byte[] whole = OnnxZoo.resnet("r", new int[] {1}, 8, 16, 10, 1).toBytes();
        Path cut = Files.write(dir.resolve("cut.onnx"), java.util.Arrays.copyOf(whole, whole.length / 2));
        assertThatThrownBy(() -> OnnxImporter.load(cut, Map.of("batch", 1L)))
                .isInstanceOf(KilnException.class)
                .hasMessageContaining("cut.onnx");
        ModelWriter bad = new ModelWriter("bad", 13).input("x", 2L, 4L);
        bad.node("Add", new String[] {"x", bad.floats("w", new float[] {1, 2, 3}, 4)}, "y");
        assertThatThrownBy(() -> OnnxImporter.fromModel(bad.output("y").build(), Map.of()))
                .hasMessageContaining("initializer 'w'")
                .hasMessageContaining("holds 3 elements, not 4");
    }
}
