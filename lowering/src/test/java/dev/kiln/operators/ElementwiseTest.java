package dev.kiln.operators;

import dev.kiln.ir.DType;
import dev.kiln.nn.Elementwise;
import dev.kiln.runtime.NDArray;
import dev.kiln.te.Te;
import dev.kiln.te.Tensor;
import java.util.List;
import java.util.function.BinaryOperator;
import java.util.function.DoubleBinaryOperator;
import org.junit.jupiter.api.Test;

/**
 * Broadcasting binary operators and bias add against plain-Java loops (float32: rtol 1e-5,
 * atol 1e-5; integers exact).
 */
class ElementwiseTest {
    private static final long[][][] PAIRS = {
        {{7, 5, 3}, {7, 5, 3}},
        {{7, 5, 3}, {3}},
        {{7, 1, 3}, {5, 1}},
        {{4, 1}, {1, 6}},
        {{1}, {2, 3}},
        {{2, 1, 4, 1}, {3, 1, 5}},
    };

    private static void check(BinaryOperator<Tensor> op, DoubleBinaryOperator ref, DType t, long seed) {
        for (long[][] p : PAIRS) {
            Tensor a = Te.placeholder("a", t, p[0]);
            Tensor b = Te.placeholder("b", t, p[1]);
            Tensor c = op.apply(a, b);
            List<NDArray> in = OpHarness.randomInputs(List.of(a, b), seed++);
            NDArray got = OpHarness.run(c, List.of(a, b), in);
            NdRef ar = NdRef.of(in.get(0)), br = NdRef.of(in.get(1));
            long[] shape = c.shape().toArray();
            NdRef want = NdRef.zeros(shape);
            NdRef.forEach(
                    shape,
                    idx -> want.set(
                            ref.applyAsDouble(ar.get(source(idx, ar.shape)), br.get(source(idx, br.shape))), idx));
            got.assertClose(want.toNd(t), t.isFloat() ? 1e-5 : 0, t.isFloat() ? 1e-5 : 0);
        }
    }

    /** The element of an operand of shape {@code s} that broadcasts to output index {@code idx}. */
    private static int[] source(int[] idx, long[] s) {
        int[] out = new int[s.length];
        int off = idx.length - s.length;
        for (int d = 0; d < s.length; d++) out[d] = s[d] == 1 ? 0 : idx[d + off];
        return out;
    }

    @Test
    void add() {
        check(Elementwise::add, Double::sum, DType.FLOAT32, 1);
        check(Elementwise::add, Double::sum, DType.INT32, 2);
    }

    @Test
    void subtract() {
        check(Elementwise::subtract, (x, y) -> x - y, DType.FLOAT32, 20);
    }

    @Test
    void multiply() {
        check(Elementwise::multiply, (x, y) -> x * y, DType.FLOAT32, 40);
        check(Elementwise::multiply, (x, y) -> x * y, DType.INT8, 50);
    }

    @Test
    void divide() {
        check(Elementwise::divide, (x, y) -> x / y, DType.FLOAT32, 60);
    }

    @Test
    void maximumAndMinimum() {
        check(Elementwise::maximum, Math::max, DType.FLOAT32, 80);
        check(Elementwise::minimum, Math::min, DType.INT32, 90);
    }

    @Test
    void biasAddAlongAnyAxis() {
        long[][] shapes = {{2, 3, 4, 5}, {2, 3, 4, 5}, {7, 5, 3}, {6}};
        int[] axes = {1, -1, 0, 0};
        for (int t = 0; t < shapes.length; t++) {
            long[] s = shapes[t];
            int ax = axes[t] < 0 ? axes[t] + s.length : axes[t];
            Tensor x = Te.placeholder("x", DType.FLOAT32, s);
            Tensor bias = Te.placeholder("bias", DType.FLOAT32, s[ax]);
            Tensor y = Elementwise.biasAdd(x, bias, axes[t]);
            List<NDArray> in = OpHarness.randomInputs(List.of(x, bias), 100 + t);
            NDArray got = OpHarness.run(y, List.of(x, bias), in);
            NdRef xr = NdRef.of(in.get(0));
            NdRef want = NdRef.zeros(s);
            NdRef.forEach(s, idx -> want.set(xr.get(idx) + in.get(1).getDouble(idx[ax]), idx));
            got.assertClose(want.toNd(DType.FLOAT32), 1e-5, 1e-5);
        }
    }
}
