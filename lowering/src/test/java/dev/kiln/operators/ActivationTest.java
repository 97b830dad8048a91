package dev.kiln.operators;

import dev.kiln.ir.DType;
import dev.kiln.nn.Activation;
import dev.kiln.runtime.NDArray;
import dev.kiln.te.Te;
import dev.kiln.te.Tensor;
import java.util.List;
import java.util.function.DoubleUnaryOperator;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;

/**
 * Activations against double-precision references on inputs spread over [-4, 4): exact ops
 * compare with rtol 1e-5, atol 1e-6 (float32 rounding only); exp/erf/tanh-based ones with
 * rtol 1e-5, atol 1e-6 as well, the interpreter computing intrinsics in double.
 */
class ActivationTest {
    private static final double RTOL = 1e-5, ATOL = 1e-6;
    private static final long[][] SHAPES = {{7, 5, 3}, {1}, {4, 9}};

    /** erf by its Taylor series, accurate to ~1e-9 for |x| <= 4 in double. */
    static double erf(double x) {
        double term = x, sum = x;
        for (int n = 1; n < 200; n++) {
            term *= -x * x / n;
            double add = term / (2 * n + 1);
            sum += add;
            if (Math.abs(add) < 1e-17) break;
        }
        return 2 / Math.sqrt(Math.PI) * sum;
    }

    private static void check(UnaryOperator<Tensor> op, DoubleUnaryOperator ref, DType t, double scale, long seed) {
        for (long[] s : SHAPES) {
            Tensor x = Te.placeholder("x", t, s);
            Tensor y = op.apply(x);
            List<NDArray> in = OpHarness.randomInputs(List.of(x), seed++);
            if (t.isFloat()) NdRef.map(in.get(0), v -> v * scale);
            NDArray got = OpHarness.run(y, List.of(x), in);
            NdRef want = NdRef.of(in.get(0));
            for (int i = 0; i < want.data.length; i++) want.data[i] = ref.applyAsDouble(want.data[i]);
            got.assertClose(want.toNd(t), t.isFloat() ? RTOL : 0, t.isFloat() ? ATOL : 0);
        }
    }

    @Test
    void erfReferenceIsAccurate() {
        // known values of erf
        org.junit.jupiter.api.Assertions.assertEquals(0.8427007929497149, erf(1), 1e-12);
        org.junit.jupiter.api.Assertions.assertEquals(-0.9953222650189527, erf(-2), 1e-12);
        org.junit.jupiter.api.Assertions.assertEquals(0.9999999845827421, erf(4), 1e-9);
    }

    @Test
    void relu() {
        check(Activation::relu, v -> Math.max(v, 0), DType.FLOAT32, 4, 1);
        check(Activation::relu, v -> Math.max(v, 0), DType.INT8, 1, 2);
    }

    @Test
    void leakyRelu() {
        check(x -> Activation.leakyRelu(x, 0.1), v -> v > 0 ? v : 0.1 * v, DType.FLOAT32, 4, 10);
        check(x -> Activation.leakyRelu(x, 0.01), v -> v > 0 ? v : 0.01 * v, DType.FLOAT64, 4, 11);
    }

    @Test
    void geluExact() {
        check(Activation::gelu, v -> v * 0.5 * (1 + erf(v / Math.sqrt(2))), DType.FLOAT32, 4, 20);
    }

    @Test
    void geluTanhApproximation() {
        DoubleUnaryOperator ref = v -> 0.5 * v * (1 + Math.tanh(Math.sqrt(2 / Math.PI) * (v + 0.044715 * v * v * v)));
        check(x -> Activation.gelu(x, true), ref, DType.FLOAT32, 4, 30);
    }

    @Test
    void sigmoidAndTanh() {
        check(Activation::sigmoid, v -> 1 / (1 + Math.exp(-v)), DType.FLOAT32, 4, 40);
        check(Activation::tanh, Math::tanh, DType.FLOAT32, 4, 50);
    }

    @Test
    void clip() {
        check(x -> Activation.clip(x, -1.5, 0.25), v -> Math.min(Math.max(v, -1.5), 0.25), DType.FLOAT32, 4, 60);
        check(x -> Activation.clip(x, -3, 5), v -> Math.min(Math.max(v, -3), 5), DType.INT32, 1, 70);
    }
}
