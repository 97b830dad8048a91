package dev.kiln.cuda;

import static dev.kiln.ir.DType.BFLOAT16;
import static dev.kiln.ir.DType.FLOAT16;
import static dev.kiln.ir.DType.FLOAT32;
import static dev.kiln.ir.DType.FLOAT64;
import static dev.kiln.ir.DType.INT32;
import static dev.kiln.ir.DType.INT8;
import static dev.kiln.te.Te.placeholder;

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
import dev.kiln.te.Tensor;
import java.util.ArrayList;
import java.util.List;

/**
 * The operator library (dev.kiln.nn) at small odd shapes, for the CUDA tests: every operator
 * family, several layouts, and the data types the operators accept (float16, bfloat16, float64,
 * int8 accumulated in int32).
 */
final class OpLibrary {
    private OpLibrary() {}

    record Case(String name, ComputeDAG dag) {
        @Override
        public String toString() {
            return name;
        }
    }

    static List<Case> all() {
        List<Case> c = new ArrayList<>();
        Tensor a = placeholder("A", FLOAT32, 7, 5), b = placeholder("B", FLOAT32, 5, 9);
        c.add(new Case("matmul", ComputeDAG.of(Linalg.matmul(a, b))));
        c.add(new Case(
                "matmul_tt",
                ComputeDAG.of(
                        Linalg.matmul(placeholder("A", FLOAT32, 5, 7), placeholder("B", FLOAT32, 9, 5), true, true))));
        c.add(new Case(
                "matmul_f16",
                ComputeDAG.of(Linalg.matmul(placeholder("A", FLOAT16, 6, 5), placeholder("B", FLOAT16, 5, 3)))));
        c.add(new Case(
                "matmul_bf16",
                ComputeDAG.of(Linalg.matmul(placeholder("A", BFLOAT16, 3, 4), placeholder("B", BFLOAT16, 4, 5)))));
        c.add(new Case(
                "matmul_f64",
                ComputeDAG.of(Linalg.matmul(placeholder("A", FLOAT64, 4, 6), placeholder("B", FLOAT64, 6, 3)))));
        c.add(new Case(
                "matmul_i8_i32",
                ComputeDAG.of(Linalg.matmul(
                        placeholder("A", INT8, 5, 7), placeholder("B", INT8, 7, 3), false, false, INT32))));
        c.add(new Case(
                "batch_matmul",
                ComputeDAG.of(
                        Linalg.batchMatmul(placeholder("X", FLOAT32, 2, 3, 5), placeholder("Y", FLOAT32, 2, 5, 4)))));
        c.add(new Case(
                "dense_bias",
                ComputeDAG.of(Linalg.dense(
                        placeholder("x", FLOAT32, 3, 6),
                        placeholder("w", FLOAT32, 5, 6),
                        placeholder("bias", FLOAT32, 5)))));
        c.add(new Case("norm", ComputeDAG.of(Linalg.norm(placeholder("v", FLOAT32, 2, 3, 5)))));
        c.add(new Case(
                "conv1d",
                ComputeDAG.of(Conv.conv1dNlc(
                        placeholder("data", FLOAT32, 1, 11, 3), placeholder("weight", FLOAT32, 3, 3, 4), 2, 1))));
        c.add(new Case(
                "conv2d_nhwc",
                ComputeDAG.of(Conv.conv2dNhwc(
                        placeholder("data", FLOAT32, 1, 7, 6, 3), placeholder("weight", FLOAT32, 3, 3, 3, 4), 1, 1))));
        c.add(new Case(
                "conv2d_nchw_dilated_grouped",
                ComputeDAG.of(Conv.conv2dNchw(
                        placeholder("data", FLOAT32, 1, 4, 7, 7),
                        placeholder("weight", FLOAT32, 6, 2, 3, 3),
                        ConvParams.of(2, 2, 1).withDilation(2, 2).withGroups(2)))));
        c.add(new Case(
                "conv3d",
                ComputeDAG.of(Conv.conv3dNdhwc(
                        placeholder("data", FLOAT32, 1, 4, 5, 3, 2),
                        placeholder("weight", FLOAT32, 2, 3, 2, 2, 3),
                        1,
                        1))));
        c.add(new Case(
                "depthwise_nchw",
                ComputeDAG.of(Conv.depthwiseConv2dNchw(
                        placeholder("data", FLOAT32, 1, 3, 6, 5), placeholder("weight", FLOAT32, 3, 1, 3, 3), 1, 1))));
        c.add(new Case(
                "depthwise_nhwc",
                ComputeDAG.of(Conv.depthwiseConv2dNhwc(
                        placeholder("data", FLOAT32, 1, 6, 5, 3), placeholder("weight", FLOAT32, 3, 3, 3, 1), 2, 1))));
        c.add(new Case(
                "conv2d_transpose",
                ComputeDAG.of(ConvTranspose.conv2dTransposeNhwc(
                        placeholder("data", FLOAT32, 1, 4, 3, 2), placeholder("weight", FLOAT32, 3, 3, 2, 3), 2, 1))));
        c.add(new Case(
                "conv2d_capsule",
                ComputeDAG.of(CapsuleConv.conv2dCapsuleNhwijc(
                        placeholder("data", FLOAT32, 1, 4, 4, 2, 2, 2),
                        placeholder("weight", FLOAT32, 3, 3, 2, 2, 2, 3),
                        1,
                        1))));
        Tensor img = placeholder("x", FLOAT32, 1, 3, 7, 6);
        c.add(new Case("max_pool", ComputeDAG.of(Pool.maxPool2dNchw(img, 3, 2, 1))));
        c.add(new Case(
                "avg_pool", ComputeDAG.of(Pool.avgPool2dNhwc(placeholder("x", FLOAT32, 1, 7, 6, 3), 2, 2, 1, false))));
        c.add(new Case(
                "global_avg_pool", ComputeDAG.of(Pool.globalAvgPool2dNchw(placeholder("x", FLOAT32, 1, 3, 5, 4)))));
        c.add(new Case(
                "global_max_pool_f16", ComputeDAG.of(Pool.globalMaxPool2dNhwc(placeholder("x", FLOAT16, 1, 5, 4, 3)))));
        Tensor x = placeholder("x", FLOAT32, 3, 7), y = placeholder("y", FLOAT32, 3, 7);
        c.add(new Case("softmax", ComputeDAG.of(Softmax.softmax(x))));
        c.add(new Case("log_softmax_axis0", ComputeDAG.of(Softmax.logSoftmax(placeholder("x", FLOAT32, 4, 5), 0))));
        c.add(new Case(
                "layer_norm",
                ComputeDAG.of(Norm.layerNorm(
                        placeholder("x", FLOAT32, 3, 6),
                        placeholder("gamma", FLOAT32, 6),
                        placeholder("beta", FLOAT32, 6),
                        1,
                        1e-5))));
        c.add(new Case(
                "batch_norm",
                ComputeDAG.of(Norm.batchNormNchw(
                        placeholder("x", FLOAT32, 1, 3, 4, 5),
                        placeholder("mean", FLOAT32, 3),
                        placeholder("var", FLOAT32, 3),
                        placeholder("gamma", FLOAT32, 3),
                        placeholder("beta", FLOAT32, 3),
                        1e-5))));
        c.add(new Case("relu_gelu", ComputeDAG.of(Activation.gelu(Activation.relu(x)))));
        c.add(new Case("gelu_tanh_f16", ComputeDAG.of(Activation.gelu(placeholder("x", FLOAT16, 5, 3), true))));
        c.add(new Case(
                "sigmoid_tanh_clip",
                ComputeDAG.of(Activation.clip(Activation.tanh(Activation.sigmoid(x)), -0.5, 0.5))));
        c.add(new Case("leaky_relu_bf16", ComputeDAG.of(Activation.leakyRelu(placeholder("x", BFLOAT16, 4, 5), 0.1))));
        c.add(new Case(
                "elementwise",
                ComputeDAG.of(Elementwise.maximum(
                        Elementwise.divide(
                                Elementwise.add(x, y),
                                Elementwise.add(Elementwise.multiply(x, x), placeholder("one", FLOAT32, 3, 7))),
                        Elementwise.minimum(x, y)))));
        c.add(new Case(
                "bias_add_subtract",
                ComputeDAG.of(Elementwise.subtract(
                        Elementwise.biasAdd(placeholder("x", FLOAT32, 2, 4, 3), placeholder("bias", FLOAT32, 4), 1),
                        placeholder("z", FLOAT32, 2, 4, 3)))));
        c.add(new Case(
                "pad_transpose_reshape",
                ComputeDAG.of(Layout.reshape(
                        Layout.transpose(
                                Pad.pad(placeholder("x", FLOAT32, 3, 4), new long[] {1, 0}, new long[] {2, 1}, 0.5)),
                        5,
                        6))));
        c.add(new Case("flatten", ComputeDAG.of(Layout.flatten(placeholder("x", FLOAT64, 2, 3, 4)))));
        c.add(new Case(
                "reductions_keepdims", ComputeDAG.of(Reduction.mean(placeholder("x", FLOAT32, 3, 5, 4), true, 0, 2))));
        c.add(new Case(
                "sum_max_min",
                ComputeDAG.of(Elementwise.add(
                        Reduction.sum(x, 1), Elementwise.subtract(Reduction.max(x, 1), Reduction.min(x, 1))))));
        c.add(new Case(
                "argmax_argmin",
                ComputeDAG.of(
                        Reduction.argmax(placeholder("x", FLOAT32, 4, 6), 1),
                        Reduction.argmin(placeholder("x2", FLOAT32, 4, 6), 0))));
        return c;
    }
}
