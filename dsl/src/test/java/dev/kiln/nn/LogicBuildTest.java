package dev.kiln.nn;

import static dev.kiln.nn.Errors.assertMessage;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.kiln.ir.DType;
import dev.kiln.te.Shape;
import dev.kiln.te.Te;
import dev.kiln.te.Tensor;
import org.junit.jupiter.api.Test;

/** Shapes, result types and argument errors of the comparisons and logical operators (numbers: OnnxMathOpsTest). */
class LogicBuildTest {
    private static Tensor ph(String n, DType t, long... s) {
        return Te.placeholder(n, t, s);
    }

    @Test
    void comparisonsBroadcastAndGiveBool() {
        Tensor lt = Logic.less(ph("a", DType.FLOAT32, 7, 1, 3), ph("b", DType.FLOAT32, 5, 1));
        assertEquals(Shape.of(7, 5, 3), lt.shape());
        assertEquals(DType.BOOL, lt.dtype());
        assertEquals(
                DType.BOOL,
                Logic.equal(ph("i", DType.INT32, 4), ph("j", DType.INT32, 1)).dtype());
        Tensor both = Logic.xor(lt, Logic.not(lt));
        assertEquals(DType.BOOL, both.dtype());
        assertEquals(DType.BOOL, Logic.equal(lt, both).dtype());
    }

    @Test
    void wrongTypesNameTheTensor() {
        Tensor f = ph("f", DType.FLOAT32, 3), b = ph("flag", DType.BOOL, 3);
        assertMessage(() -> Logic.and(f, b), "logical_and", "'f'", "float32", "bool is needed");
        assertMessage(() -> Logic.not(f), "logical_not", "'f'");
        assertMessage(() -> Logic.less(b, b), "less", "'flag'", "numeric type is needed");
        assertMessage(() -> Logic.greater(f, ph("n", DType.INT32, 3)), "greater", "dtype mismatch", "'n'");
        assertMessage(() -> Logic.or(b, ph("other", DType.BOOL, 4)), "logical_or", "'other'", "extent 4");
    }
}
