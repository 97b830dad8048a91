package dev.kiln.nn;

import static dev.kiln.nn.Errors.assertMessage;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.kiln.ir.DType;
import dev.kiln.te.ComputeDAG;
import dev.kiln.te.Shape;
import dev.kiln.te.Te;
import dev.kiln.te.Tensor;
import org.junit.jupiter.api.Test;

class LayoutReductionBuildTest {
    private static Tensor ph(String n, long... s) {
        return Te.placeholder(n, DType.FLOAT32, s);
    }

    @Test
    void reshapeShapes() {
        Tensor x = ph("x", 7, 5, 3);
        assertEquals(Shape.of(35, 3), Layout.reshape(x, 35, 3).shape());
        assertEquals(Shape.of(3, 35), Layout.reshape(x, 3, -1).shape());
        assertEquals(Shape.of(105), Layout.reshape(x, -1).shape());
        assertEquals(0L, ComputeDAG.of(Layout.reshape(x, 105)).flopCount());
        assertMessage(() -> Layout.reshape(x, 10, 10), "reshape", "'x' [7, 5, 3]", "105", "[10, 10]");
        assertMessage(() -> Layout.reshape(x, 4, -1), "reshape", "'x'", "[4, -1]");
        assertMessage(() -> Layout.reshape(x, -1, -1), "more than one -1");
        assertMessage(() -> Layout.reshape(x, 0, 5), "non-positive", "'x'");
    }

    @Test
    void transposeAndFlattenShapes() {
        Tensor x = ph("x", 7, 5, 3);
        assertEquals(Shape.of(3, 7, 5), Layout.transpose(x, 2, 0, 1).shape());
        assertEquals(Shape.of(3, 5, 7), Layout.transpose(x).shape());
        assertEquals(Shape.of(5, 7, 3), Layout.transpose(x, 1, 0, -1).shape());
        assertMessage(() -> Layout.transpose(x, 0, 1), "transpose", "[0, 1]", "2 entries", "'x'", "rank 3");
        assertMessage(() -> Layout.transpose(x, 0, 1, 1), "transpose", "axis 1", "twice", "'x'");
        assertMessage(() -> Layout.transpose(x, 0, 1, 3), "transpose", "axis 3", "out of range", "'x'");
        assertEquals(Shape.of(7, 15), Layout.flatten(x).shape());
        assertEquals(Shape.of(35, 3), Layout.flatten(x, 0, 1).shape());
        assertEquals(Shape.of(105), Layout.flatten(x, 0, -1).shape());
        assertEquals(Shape.of(4), Layout.flatten(ph("v", 4)).shape());
        assertMessage(() -> Layout.flatten(x, 2, 1), "flatten", "start axis 2", "end axis 1", "'x'");
        assertMessage(() -> Layout.flatten(x, 0, 3), "flatten", "axis 3", "'x'");
    }

    @Test
    void reductionShapes() {
        Tensor x = ph("x", 7, 5, 3);
        assertEquals(Shape.of(7, 3), Reduction.sum(x, 1).shape());
        assertEquals(Shape.of(7, 1, 3), Reduction.sum(x, true, 1).shape());
        assertEquals(Shape.of(5), Reduction.max(x, 0, -1).shape());
        assertEquals(Shape.of(1, 5, 1), Reduction.min(x, true, 2, 0).shape());
        assertEquals(Shape.of(), Reduction.mean(x).shape());
        assertEquals(Shape.of(1, 1, 1), Reduction.mean(x, true).shape());
        assertEquals(7L * 5 * 3, ComputeDAG.of(Reduction.sum(x, 1)).flopCount());
        Tensor am = Reduction.argmax(x, 1);
        assertEquals(Shape.of(7, 3), am.shape());
        assertEquals(DType.INT32, am.dtype());
        assertEquals(Shape.of(7, 5, 1), Reduction.argmin(x, -1, true).shape());
        assertEquals(DType.FLOAT32, am.op().output(0).dtype());
    }

    @Test
    void reductionErrors() {
        Tensor x = ph("x", 7, 5, 3);
        assertMessage(() -> Reduction.sum(x, 3), "sum", "axis 3", "'x' [7, 5, 3]", "rank 3");
        assertMessage(() -> Reduction.max(x, 1, -2), "max", "axis 1", "twice", "'x'");
        assertMessage(() -> Reduction.argmax(x, -4), "argmax", "axis -4", "'x'");
        assertMessage(() -> Reduction.mean(Te.placeholder("q", DType.INT32, 3)), "mean", "'q'", "int32");
        assertMessage(() -> Reduction.sum(Te.placeholder("p", DType.BOOL, 3)), "sum", "'p'", "bool");
    }
}
