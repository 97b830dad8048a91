package dev.kiln.operators;

import dev.kiln.ir.DType;
import dev.kiln.nn.Softmax;
import dev.kiln.runtime.NDArray;
import dev.kiln.te.Te;
import dev.kiln.te.Tensor;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Softmax and log-softmax against a double-precision reference (exp-based: rtol 1e-5,
 * atol 1e-6), over every axis of several shapes, and on inputs large enough that exp overflows
 * float32 unless the maximum is subtracted first.
 */
class SoftmaxTest {
    private static final double RTOL = 1e-5, ATOL = 1e-6;
    private static final long[][] SHAPES = {{9}, {4, 7}, {7, 5, 3}, {1, 6}, {2, 1, 4}};

    /** Softmax (or log-softmax) of {@code x} along {@code axis}, row by row in double. */
    private static NdRef reference(NdRef x, int axis, boolean log) {
        NdRef out = NdRef.zeros(x.shape);
        int n = x.dim(axis);
        NdRef.forEach(x.shape, idx -> {
            if (idx[axis] != 0) return;
            int[] p = idx.clone();
            double m = Double.NEGATIVE_INFINITY;
            for (int t = 0; t < n; t++) {
                p[axis] = t;
                m = Math.max(m, x.get(p));
            }
            double s = 0;
            for (int t = 0; t < n; t++) {
                p[axis] = t;
                s += Math.exp(x.get(p) - m);
            }
            for (int t = 0; t < n; t++) {
                p[axis] = t;
                double v = x.get(p);
                out.set(log ? v - m - Math.log(s) : Math.exp(v - m) / s, p);
            }
        });
        return out;
    }

    private static void check(long[] shape, int axis, boolean log, double scale, long seed) {
        Tensor x = Te.placeholder("x", DType.FLOAT32, shape);
        Tensor y = log ? Softmax.logSoftmax(x, axis) : Softmax.softmax(x, axis);
        List<NDArray> in = OpHarness.randomInputs(List.of(x), seed);
        NdRef.map(in.get(0), v -> v * scale);
        NDArray got = OpHarness.run(y, List.of(x), in);
        int a = axis < 0 ? axis + shape.length : axis;
        got.assertClose(reference(NdRef.of(in.get(0)), a, log).toNd(DType.FLOAT32), RTOL, ATOL);
    }

    @Test
    void softmaxOverEveryAxis() {
        long seed = 1;
        for (long[] s : SHAPES) {
            for (int axis = -1; axis < s.length; axis++) check(s, axis, false, 3, seed++);
        }
    }

    @Test
    void logSoftmaxOverEveryAxis() {
        long seed = 50;
        for (long[] s : SHAPES) {
            for (int axis = -1; axis < s.length; axis++) check(s, axis, true, 3, seed++);
        }
    }

    @Test
    void largeInputsStayFinite() {
        // values up to +-200: exp(200) overflows float32, so only the max-subtracting form is finite
        check(new long[] {5, 11}, -1, false, 200, 77);
        check(new long[] {5, 11}, 0, true, 200, 78);
    }

    @Test
    void defaultAxisIsLast() {
        Tensor x = Te.placeholder("x", DType.FLOAT32, 3, 8);
        List<NDArray> in = OpHarness.randomInputs(List.of(x), 9);
        NdRef want = reference(NdRef.of(in.get(0)), 1, false);
        OpHarness.run(Softmax.softmax(x), List.of(x), in).assertClose(want.toNd(DType.FLOAT32), RTOL, ATOL);
        NdRef wantLog = reference(NdRef.of(in.get(0)), 1, true);
        OpHarness.run(Softmax.logSoftmax(x), List.of(x), in).assertClose(wantLog.toNd(DType.FLOAT32), RTOL, ATOL);
    }
}
