package dev.kiln.jit;

import dev.kiln.ir.DType;
import dev.kiln.lower.LowerDefault;
import dev.kiln.nn.Activation;
import dev.kiln.nn.CapsuleConv;
import dev.kiln.nn.Conv;
import dev.kiln.nn.ConvParams;
import dev.kiln.nn.ConvTranspose;
import dev.kiln.nn.Elementwise;
import dev.kiln.nn.Layout;
import dev.kiln.nn.Linalg;
import dev.kiln.nn.Norm;
import dev.kiln.nn.Pad;
import dev.kiln.nn.Pool;
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

    private static Tensor in(String name, long... shape) {
        return Te.placeholder(name, F32, shape);
    }

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
        exact(
                "matmul_i8",
                Linalg.matmul(
                        Te.placeholder("a", DType.INT8, 6, 11),
                        Te.placeholder("b", DType.INT8, 11, 3),
                        false,
                        false,
                        DType.INT32),
                33);
        exact("batch_matmul", Linalg.batchMatmul(in("x", 3, 4, 6), in("y", 3, 6, 5)), 34);
        exact("batch_matmul_t", Linalg.batchMatmul(in("x", 2, 6, 4), in("y", 2, 5, 6), true, true), 35);
        exact("dense", Linalg.dense(in("x", 4, 10), in("w", 3, 10), in("bias", 3)), 36);
        close("norm", Linalg.norm(in("a", 2, 5, 6)), 37);
    }

    /** Variances are random in [-1, 1): negative ones give NaN on both sides, which compare equal. */
    @Test
    void normalisation() {
        Tensor x = in("x", 2, 3, 4, 5);
        exact(
                "batch_norm_nchw",
                Norm.batchNormNchw(x, in("mean", 3), in("var", 3), in("gamma", 3), in("beta", 3), 1e-5),
                41);
        exact(
                "batch_norm_nhwc",
                Norm.batchNormNhwc(
                        in("y", 2, 4, 5, 3), in("mean", 3), in("var", 3), in("gamma", 3), in("beta", 3), 1e-5),
                42);
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
    void convolutions() {
        exact("conv1d", Conv.conv1dNlc(in("d", 2, 11, 3), in("w", 3, 3, 4), 2, 1), 71);
        exact("conv2d_nhwc", Conv.conv2dNhwc(in("d", 1, 9, 7, 3), in("w", 3, 3, 3, 5), 1, 1), 72);
        exact("conv2d_nchw_s2", Conv.conv2dNchw(in("d", 1, 4, 9, 8), in("w", 6, 4, 3, 3), 2, 1), 73);
        exact(
                "conv2d_grouped_dilated",
                Conv.conv2dNhwc(
                        in("d", 1, 10, 9, 4),
                        in("w", 3, 3, 2, 6),
                        ConvParams.of(2, 1, 2).withDilation(2, 2).withGroups(2)),
                74);
        exact("conv3d", Conv.conv3dNdhwc(in("d", 1, 5, 6, 4, 2), in("w", 3, 3, 3, 2, 3), 1, 1), 75);
        exact("depthwise_nhwc", Conv.depthwiseConv2dNhwc(in("d", 1, 8, 7, 3), in("w", 3, 3, 3, 2), 1, 1), 76);
        exact("depthwise_nchw", Conv.depthwiseConv2dNchw(in("d", 1, 3, 8, 7), in("w", 3, 2, 3, 3), 2, 1), 77);
        exact(
                "conv2d_transpose_nhwc",
                ConvTranspose.conv2dTransposeNhwc(in("d", 1, 5, 4, 3), in("w", 3, 3, 3, 2), 2, 1),
                78);
        exact(
                "conv2d_transpose_nchw",
                ConvTranspose.conv2dTransposeNchw(in("d", 1, 3, 5, 4), in("w", 3, 2, 3, 3), 2, 1),
                79);
        exact(
                "capsule_conv",
                CapsuleConv.conv2dCapsuleNhwijc(in("d", 1, 5, 5, 2, 2, 3), in("w", 3, 3, 2, 2, 3, 2), 1, 1),
                80);
    }

    @Test
    void poolingAndPadding() {
        Tensor x = in("x", 1, 3, 9, 8);
        exact("max_pool_nchw", Pool.maxPool2dNchw(x, 3, 2, 1), 81);
        exact("max_pool_nhwc", Pool.maxPool2dNhwc(in("y", 1, 9, 8, 3), 2, 2, 0), 82);
        exact("avg_pool_incl", Pool.avgPool2dNchw(x, 3, 2, 1, true), 83);
        exact("avg_pool_excl", Pool.avgPool2dNhwc(in("y", 1, 9, 8, 3), 3, 1, 1, false), 84);
        exact("global_max", Pool.globalMaxPool2dNchw(x), 85);
        exact("global_avg", Pool.globalAvgPool2dNhwc(in("y", 2, 5, 6, 3)), 86);
        exact("pad", Pad.pad(in("p", 3, 4), new long[] {1, 0}, new long[] {2, 3}, -1.5), 87);
    }

    @Test
    void softmax() {
        close("softmax", Softmax.softmax(in("x", 4, 13)), 61);
        close("softmax_axis0", Softmax.softmax(in("x", 6, 5), 0), 62);
        close("log_softmax", Softmax.logSoftmax(in("x", 3, 11)), 63);
    }
}
