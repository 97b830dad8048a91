package dev.kiln.operators;

import dev.kiln.ir.DType;
import dev.kiln.nn.Norm;
import dev.kiln.runtime.NDArray;
import dev.kiln.te.Te;
import dev.kiln.te.Tensor;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Batch norm (inference) and layer norm against plain-Java double references (rtol 1e-5, atol 1e-5). */
class NormTest {
    private static final double RTOL = 1e-5, ATOL = 1e-5;

    private static Tensor ph(String n, long... s) {
        return Te.placeholder(n, DType.FLOAT32, s);
    }

    /** Runs batch norm on x of {@code shape} with channels on {@code axis} (via the given builder). */
    private static void checkBatchNorm(long[] shape, int axis, int builder, long seed) {
        int c = axis < 0 ? axis + shape.length : axis;
        long ch = shape[c];
        Tensor x = ph("x", shape);
        Tensor mean = ph("mean", ch), var = ph("var", ch), gamma = ph("gamma", ch), beta = ph("beta", ch);
        double eps = 1e-3;
        Tensor y =
                switch (builder) {
                    case 0 -> Norm.batchNorm(x, axis, mean, var, gamma, beta, eps);
                    case 1 -> Norm.batchNormNchw(x, mean, var, gamma, beta, eps);
                    default -> Norm.batchNormNhwc(x, mean, var, gamma, beta, eps);
                };
        List<Tensor> ins = List.of(x, mean, var, gamma, beta);
        List<NDArray> in = OpHarness.randomInputs(ins, seed);
        NdRef.map(in.get(2), v -> Math.abs(v) + 0.05); // a variance is positive
        NDArray got = OpHarness.run(y, ins, in);
        NdRef xr = NdRef.of(in.get(0));
        NdRef want = NdRef.zeros(shape);
        NdRef.forEach(shape, idx -> {
            int k = idx[c];
            double v = (xr.get(idx) - in.get(1).getDouble(k))
                            / Math.sqrt(in.get(2).getDouble(k) + eps)
                            * in.get(3).getDouble(k)
                    + in.get(4).getDouble(k);
            want.set(v, idx);
        });
        got.assertClose(want.toNd(DType.FLOAT32), RTOL, ATOL);
    }

    @Test
    void batchNormNchwNhwcAndOtherAxes() {
        checkBatchNorm(new long[] {2, 3, 4, 5}, 1, 1, 1);
        checkBatchNorm(new long[] {1, 7, 3, 2}, 1, 1, 2);
        checkBatchNorm(new long[] {2, 4, 5, 3}, 3, 2, 3);
        checkBatchNorm(new long[] {1, 2, 3, 6}, -1, 2, 4);
        checkBatchNorm(new long[] {7, 5, 3}, 1, 0, 5);
        checkBatchNorm(new long[] {7, 5, 3}, -1, 0, 6);
        checkBatchNorm(new long[] {9}, 0, 0, 7);
    }

    private static void checkLayerNorm(long[] shape, int k, long seed) {
        int r = shape.length, lead = r - k;
        long[] inner = java.util.Arrays.copyOfRange(shape, lead, r);
        long[] outer = java.util.Arrays.copyOf(shape, lead);
        Tensor x = ph("x", shape), gamma = ph("gamma", inner), beta = ph("beta", inner);
        double eps = 1e-5;
        Tensor y = Norm.layerNorm(x, gamma, beta, k, eps);
        List<Tensor> ins = List.of(x, gamma, beta);
        List<NDArray> in = OpHarness.randomInputs(ins, seed);
        NDArray got = OpHarness.run(y, ins, in);
        NdRef xr = NdRef.of(in.get(0)), g = NdRef.of(in.get(1)), b = NdRef.of(in.get(2));
        NdRef want = NdRef.zeros(shape);
        NdRef.forEach(outer, o -> {
            double[] sums = new double[2];
            NdRef.forEach(inner, i -> sums[0] += xr.get(concat(o, i)));
            long count = 1;
            for (long d : inner) count *= d;
            double mean = sums[0] / count;
            NdRef.forEach(inner, i -> {
                double d = xr.get(concat(o, i)) - mean;
                sums[1] += d * d;
            });
            double var = sums[1] / count;
            NdRef.forEach(inner, i -> {
                double v = (xr.get(concat(o, i)) - mean) / Math.sqrt(var + eps) * g.get(i) + b.get(i);
                want.set(v, concat(o, i));
            });
        });
        got.assertClose(want.toNd(DType.FLOAT32), RTOL, ATOL);
    }

    private static int[] concat(int[] a, int[] b) {
        int[] out = java.util.Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }

    @Test
    void layerNormOverLastAxes() {
        checkLayerNorm(new long[] {4, 7}, 1, 10);
        checkLayerNorm(new long[] {2, 3, 5}, 1, 11);
        checkLayerNorm(new long[] {2, 3, 5}, 2, 12);
        checkLayerNorm(new long[] {7, 5, 3}, 3, 13);
        checkLayerNorm(new long[] {3, 1, 16}, 2, 14);
    }
}
