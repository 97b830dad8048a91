package dev.kiln.nn;

import static dev.kiln.nn.Errors.assertMessage;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.kiln.ir.DType;
import dev.kiln.te.ComputeDAG;
import dev.kiln.te.Shape;
import dev.kiln.te.Te;
import dev.kiln.te.Tensor;
import org.junit.jupiter.api.Test;

class ElementwiseBuildTest {
    private static Tensor ph(String n, long... s) {
        return Te.placeholder(n, DType.FLOAT32, s);
    }

    @Test
    void broadcastShapes() {
        assertEquals(
                Shape.of(7, 5, 3),
                Elementwise.add(ph("a", 7, 5, 3), ph("b", 7, 5, 3)).shape());
        assertEquals(
                Shape.of(7, 5, 3), Elementwise.add(ph("a", 7, 5, 3), ph("b", 3)).shape());
        assertEquals(
                Shape.of(7, 5, 3),
                Elementwise.multiply(ph("a", 7, 1, 3), ph("b", 5, 1)).shape());
        assertEquals(
                Shape.of(4, 6),
                Elementwise.subtract(ph("a", 4, 1), ph("b", 1, 6)).shape());
        assertEquals(
                Shape.of(2, 3), Elementwise.divide(ph("a", 1), ph("b", 2, 3)).shape());
        assertEquals(
                7L * 5 * 3,
                ComputeDAG.of(Elementwise.add(ph("a", 7, 5, 3), ph("b", 3))).flopCount());
    }

    @Test
    void incompatibleShapesNameBothTensorsAndTheAxis() {
        assertMessage(
                () -> Elementwise.add(ph("a", 7, 5, 3), ph("b", 4, 3)),
                "add",
                "'a' [7, 5, 3]",
                "'b' [4, 3]",
                "axis 1 of the result",
                "axis 1 of 'a' has extent 5",
                "axis 0 of 'b' has extent 4");
        assertMessage(() -> Elementwise.multiply(ph("a", 2, 3), ph("b", 2, 4)), "multiply", "axis 1", "3", "4");
    }

    @Test
    void dtypeErrors() {
        assertMessage(
                () -> Elementwise.add(ph("a", 3), Te.placeholder("b", DType.INT32, 3)),
                "add",
                "dtype mismatch",
                "'a'",
                "float32",
                "'b'",
                "int32");
        assertMessage(
                () -> Elementwise.divide(Te.placeholder("a", DType.INT32, 3), Te.placeholder("b", DType.INT32, 3)),
                "divide",
                "'a'",
                "int32",
                "floating");
        assertMessage(
                () -> Elementwise.add(Te.placeholder("p", DType.BOOL, 3), Te.placeholder("q", DType.BOOL, 3)),
                "add",
                "'p'",
                "bool");
    }

    @Test
    void biasAdd() {
        assertEquals(
                Shape.of(2, 3, 4),
                Elementwise.biasAdd(ph("x", 2, 3, 4), ph("b", 3), 1).shape());
        assertEquals(
                Shape.of(2, 3, 4),
                Elementwise.biasAdd(ph("x", 2, 3, 4), ph("b", 4), -1).shape());
        assertMessage(
                () -> Elementwise.biasAdd(ph("x", 2, 3, 4), ph("b", 4), 1),
                "bias_add",
                "bias tensor 'b' [4]",
                "[3]",
                "axis 1",
                "'x'");
        assertMessage(() -> Elementwise.biasAdd(ph("x", 2, 3, 4), ph("b", 4), 3), "bias_add", "axis 3", "'x'");
        assertMessage(
                () -> Elementwise.biasAdd(ph("x", 2, 3), Te.placeholder("b", DType.FLOAT16, 3), -1),
                "bias_add",
                "'b'",
                "float16");
    }

    @Test
    void activationsKeepShapeAndCheckTypes() {
        Tensor x = ph("x", 7, 5, 3);
        for (Tensor t : new Tensor[] {
            Activation.relu(x),
            Activation.leakyRelu(x, 0.1),
            Activation.gelu(x),
            Activation.gelu(x, true),
            Activation.sigmoid(x),
            Activation.tanh(x),
            Activation.clip(x, -0.5, 0.5)
        }) {
            assertEquals(x.shape(), t.shape());
            assertEquals(DType.FLOAT32, t.dtype());
        }
        Tensor q = Te.placeholder("q", DType.INT8, 4);
        assertEquals(DType.INT8, Activation.relu(q).dtype());
        assertEquals(DType.INT8, Activation.clip(q, -3, 3).dtype());
        assertMessage(() -> Activation.gelu(q), "gelu", "'q'", "int8", "floating");
        assertMessage(() -> Activation.sigmoid(q), "sigmoid", "'q'");
        assertMessage(() -> Activation.clip(q, -0.5, 3), "clip", "lo", "'q'", "int8");
        assertMessage(() -> Activation.clip(q, 0, 300), "clip", "hi", "300", "'q'");
        assertMessage(() -> Activation.clip(x, 1, 0), "clip", "'x'", "lo");
    }
}
