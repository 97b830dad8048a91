package dev.kiln.jit;

import dev.kiln.ir.DType;
import dev.kiln.lower.LowerDefault;
import dev.kiln.nn.Activation;
import dev.kiln.nn.Elementwise;
import dev.kiln.nn.Layout;
import dev.kiln.nn.Linalg;
import dev.kiln.nn.Norm;
import dev.kiln.nn.Reduction;
import dev.kiln.nn.Softmax;
import dev.kiln.te.ComputeDAG;
import dev.kiln.te.Te;
import dev.kiln.te.Tensor;
import org.junit.jupiter.api.Test;

/**
 * Every operator of the library ({@code dev.kiln.nn}) through the default lowering, the JIT and
 * the interpreter, on random inputs of odd shapes. Exact operators agree bit for bit; those with
 * exp, log, tanh or erf within a few float32 ulps.
 */
class NnLibraryTest {
    private static final DType F32 = DType.FLOAT32;
    private static final double MATH = 4e-7; // a few float32 ulps, relative

    private static Tensor in(String name, long... shape) { return Te.placeholder(name, F32, shape); }

    private static void exact(String name, Tensor out, long seed) {
        JitCheck.exact(LowerDefault.lower(name, ComputeDAG.of(out)), seed);
    }

    private static void close(String name, Tensor out, long seed) {
        JitCheck.matches(LowerDefault.lower(name, ComputeDAG.of(out)), seed, MATH, 1e-7);
    }

    @Test
    void activations() {
        Tensor x = in("x", 3, 17);
        exact("relu", Activation.relu(x), 1);
        exact("leaky_relu", Activation.leakyRelu(x, 0.1), 2);
        exact("clip", Activation.clip(x, -0.5, 0.25), 3);
        close("gelu", Activation.gelu(x), 4);
        close("gelu_tanh", Activation.gelu(x, true), 5);
        close("sigmoid", Activation.sigmoid(x), 6);
        close("tanh", Activation.tanh(x), 7);
    }

    @Test
    void broadcastingElementwise() {
        Tensor a = in("a", 4, 1, 7), b = in("b", 5, 1);
        exact("add", Elementwise.add(a, b), 11);
        exact("subtract", Elementwise.subtract(a, b), 12);
        exact("multiply", Elementwise.multiply(a, b), 13);
        exact("divide", Elementwise.divide(a, b), 14);
        exact("maximum", Elementwise.maximum(a, b), 15);
        exact("minimum", Elementwise.minimum(a, b), 16);
        exact("bias_add", Elementwise.biasAdd(in("x", 2, 3, 5), in("bias", 3), 1), 17);
    }

    @Test
    void layouts() {
        Tensor x = in("x", 2, 3, 5);
        exact("reshape", Layout.reshape(x, 5, 6), 21);
        exact("transpose", Layout.transpose(x), 22);
        exact("transpose_perm", Layout.transpose(x, 1, 2, 0), 23);
        exact("flatten", Layout.flatten(x), 24);
        exact("flatten_mid", Layout.flatten(in("y", 2, 3, 4, 5), 1, 2), 25);
    }

    @Test
    void linearAlgebra() {
        exact("matmul", Linalg.matmul(in("a", 7, 9), in("b", 9, 5)), 31);
        exact("matmul_tt", Linalg.matmul(in("a", 9, 7), in("b", 5, 9), true, true), 32);
        exact("matmul_i8", Linalg.matmul(Te.placeholder("a", DType.INT8, 6, 11), Te.placeholder("b", DType.INT8, 11, 3),
                false, false, DType.INT32), 33);
        exact("batch_matmul", Linalg.batchMatmul(in("x", 3, 4, 6), in("y", 3, 6, 5)), 34);
        exact("batch_matmul_t", Linalg.batchMatmul(in("x", 2, 6, 4), in("y", 2, 5, 6), true, true), 35);
        exact("dense", Linalg.dense(in("x", 4, 10), in("w", 3, 10), in("bias", 3)), 36);
        close("norm", Linalg.norm(in("a", 2, 5, 6)), 37);
    }

    /** Variances are random in [-1, 1): negative ones give NaN on both sides, which compare equal. */
    @Test
    void normalisation() {
        Tensor x = in("x", 2, 3, 4, 5);
        exact("batch_norm_nchw", Norm.batchNormNchw(x, in("mean", 3), in("var", 3), in("gamma", 3), in("beta", 3),
                1e-5), 41);
        exact("batch_norm_nhwc", Norm.batchNormNhwc(in("y", 2, 4, 5, 3), in("mean", 3), in("var", 3), in("gamma", 3),
                in("beta", 3), 1e-5), 42);
        exact("layer_norm", Norm.layerNorm(in("z", 3, 4, 7), in("gamma", 4, 7), in("beta", 4, 7), 2, 1e-5), 43);
    }

    @Test
    void reductions() {
        Tensor x = in("x", 3, 5, 7);
        exact("sum", Reduction.sum(x, 1), 51);
        exact("sum_keep", Reduction.sum(x, true, 0, 2), 52);
        exact("max", Reduction.max(x, 2), 53);
        exact("min", Reduction.min(x, 0, 1), 54);
        exact("mean", Reduction.mean(x, 1, 2), 55);
        exact("argmax", Reduction.argmax(x, 1), 56);
        exact("argmin", Reduction.argmin(x, 2, true), 57);
    }

    @Test
    void softmax() {
        close("softmax", Softmax.softmax(in("x", 4, 13)), 61);
        close("softmax_axis0", Softmax.softmax(in("x", 6, 5), 0), 62);
        close("log_softmax", Softmax.logSoftmax(in("x", 3, 11)), 63);
    }
}
