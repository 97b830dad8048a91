package dev.kiln.fuzz;

import static dev.kiln.ir.DType.FLOAT32;

import dev.kiln.nn.Activation;
import dev.kiln.nn.Conv;
import dev.kiln.nn.ConvParams;
import dev.kiln.nn.ConvTranspose;
import dev.kiln.nn.Elementwise;
import dev.kiln.nn.Linalg;
import dev.kiln.nn.Norm;
import dev.kiln.nn.Pool;
import dev.kiln.nn.Reduction;
import dev.kiln.nn.Softmax;
import dev.kiln.te.ComputeDAG;
import dev.kiln.te.Te;
import dev.kiln.te.Tensor;
import java.util.SplittableRandom;

/**
 * Operators of the library at small random shapes, sometimes followed by an activation, for
 * differential testing of schedules on the computations users actually write.
 */
final class RandomOperators {
    private RandomOperators() {}

    static ComputeDAG generate(SplittableRandom rng) {
        Tensor out = op(rng);
        if (rng.nextInt(3) == 0 && out.dtype() == FLOAT32)
            out = rng.nextBoolean() ? Activation.relu(out) : Activation.sigmoid(out);
        return ComputeDAG.of(out);
    }

    private static long dim(SplittableRandom rng, int max) {
        return 1 + rng.nextInt(max);
    }

    private static Tensor op(SplittableRandom rng) {
        switch (rng.nextInt(11)) {
            case 0 -> {
                boolean ta = rng.nextBoolean(), tb = rng.nextBoolean();
                long m = dim(rng, 9), n = dim(rng, 9), k = dim(rng, 9);
                Tensor a = Te.placeholder("A", FLOAT32, ta ? k : m, ta ? m : k);
                Tensor b = Te.placeholder("B", FLOAT32, tb ? n : k, tb ? k : n);
                return Linalg.matmul(a, b, ta, tb);
            }
            case 1 -> {
                long bt = dim(rng, 3), m = dim(rng, 6), n = dim(rng, 6), k = dim(rng, 6);
                return Linalg.batchMatmul(
                        Te.placeholder("X", FLOAT32, bt, m, k), Te.placeholder("Y", FLOAT32, bt, k, n));
            }
            case 2 -> {
                long n = dim(rng, 5), k = dim(rng, 8), u = dim(rng, 7);
                return Linalg.dense(
                        Te.placeholder("x", FLOAT32, n, k),
                        Te.placeholder("w", FLOAT32, u, k),
                        Te.placeholder("bias", FLOAT32, u));
            }
            case 3 -> {
                Tensor x = Te.placeholder("x", FLOAT32, dim(rng, 6), dim(rng, 9));
                return Softmax.softmax(x, rng.nextBoolean() ? -1 : 0);
            }
            case 4 -> {
                long c = dim(rng, 8);
                Tensor x = Te.placeholder("x", FLOAT32, dim(rng, 4), c);
                return Norm.layerNorm(
                        x, Te.placeholder("gamma", FLOAT32, c), Te.placeholder("beta", FLOAT32, c), 1, 1e-5);
            }
            case 5 -> {
                long h = 2 + rng.nextInt(6), w = 2 + rng.nextInt(6), ci = dim(rng, 4) * 2, co = dim(rng, 3) * 2;
                long k = 1 + rng.nextInt(3), groups = rng.nextBoolean() ? 1 : 2;
                long stride = 1 + rng.nextInt(2), pad = rng.nextInt(2), dil = 1 + rng.nextInt(2);
                if ((k - 1) * dil + 1 > h + 2 * pad || (k - 1) * dil + 1 > w + 2 * pad) dil = 1;
                if (k > h + 2 * pad || k > w + 2 * pad) k = 1;
                Tensor data = Te.placeholder("data", FLOAT32, 1, h, w, ci);
                Tensor weight = Te.placeholder("weight", FLOAT32, k, k, ci / groups, co);
                return Conv.conv2dNhwc(
                        data,
                        weight,
                        ConvParams.of(2, stride, pad).withDilation(dil, dil).withGroups(groups));
            }
            case 6 -> {
                long c = dim(rng, 4);
                Tensor data = Te.placeholder("data", FLOAT32, 1, c, 2 + rng.nextInt(6), 2 + rng.nextInt(6));
                return Conv.depthwiseConv2dNchw(
                        data, Te.placeholder("weight", FLOAT32, c, 1, 3, 3), 1 + rng.nextInt(2), 1);
            }
            case 7 -> {
                Tensor x = Te.placeholder("x", FLOAT32, 1, 2 + rng.nextInt(7), 2 + rng.nextInt(7), dim(rng, 3));
                return rng.nextBoolean()
                        ? Pool.maxPool2dNhwc(x, 2, 1 + rng.nextInt(2), rng.nextInt(2))
                        : Pool.avgPool2dNhwc(x, 2, 1 + rng.nextInt(2), rng.nextInt(2), rng.nextBoolean());
            }
            case 8 -> {
                Tensor x = Te.placeholder("x", FLOAT32, dim(rng, 5), dim(rng, 7));
                return rng.nextBoolean() ? Reduction.argmax(x, 1) : Reduction.mean(x, 0);
            }
            case 9 -> {
                long ci = dim(rng, 3), co = dim(rng, 3);
                Tensor data = Te.placeholder("data", FLOAT32, 1, 2 + rng.nextInt(3), 2 + rng.nextInt(3), ci);
                return ConvTranspose.conv2dTransposeNhwc(data, Te.placeholder("weight", FLOAT32, 3, 3, ci, co), 2, 1);
            }
            default -> {
                long c = dim(rng, 4);
                Tensor x = Te.placeholder("x", FLOAT32, 1, c, dim(rng, 5), dim(rng, 5));
                Tensor bn = Norm.batchNormNchw(
                        x,
                        Te.placeholder("mean", FLOAT32, c),
                        Te.placeholder("var", FLOAT32, c),
                        Te.placeholder("gamma", FLOAT32, c),
                        Te.placeholder("beta", FLOAT32, c),
                        1e-3);
                return Elementwise.add(bn, x);
            }
        }
    }
}
