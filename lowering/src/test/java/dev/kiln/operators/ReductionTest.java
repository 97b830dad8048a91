package dev.kiln.operators;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kiln.ir.DType;
import dev.kiln.nn.Reduction;
import dev.kiln.runtime.NDArray;
import dev.kiln.te.Te;
import dev.kiln.te.Tensor;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Reductions against plain-Java loops: float32 sums and means with rtol 1e-5, atol 1e-5, max/min
 * and arg-reductions exactly; int8 inputs (values in [-8, 8)) give many ties to check that
 * argmax/argmin pick the smallest index.
 */
class ReductionTest {
    private enum Kind {
        SUM,
        MAX,
        MIN,
        MEAN,
        ARGMAX,
        ARGMIN
    }

    /** Reference: reduce {@code x} over the sorted {@code axes}, keeping them as 1 if keepdims. */
    private static NdRef reference(NdRef x, int[] axes, boolean keepdims, Kind kind) {
        int r = x.shape.length;
        long[] keptShape = x.shape.clone();
        for (int a : axes) keptShape[a] = 1;
        NdRef acc = NdRef.zeros(keptShape);
        NdRef best = NdRef.zeros(keptShape);
        boolean[] started = new boolean[acc.data.length];
        long count = 1;
        for (int a : axes) count *= x.shape[a];
        NdRef.forEach(x.shape, idx -> {
            int[] o = idx.clone();
            for (int a : axes) o[a] = 0;
            int off = acc.offset(o);
            double v = x.get(idx);
            int pos = axes.length == 1 ? idx[axes[0]] : 0;
            if (!started[off]) {
                started[off] = true;
                acc.data[off] = kind == Kind.SUM || kind == Kind.MEAN ? 0 : v;
                best.data[off] = pos;
            }
            switch (kind) {
                case SUM, MEAN -> acc.data[off] += v;
                case MAX -> acc.data[off] = Math.max(acc.data[off], v);
                case MIN -> acc.data[off] = Math.min(acc.data[off], v);
                case ARGMAX -> { // row-major visit order: a strictly larger value replaces, a tie keeps the first
                    if (v > acc.data[off]) {
                        acc.data[off] = v;
                        best.data[off] = pos;
                    }
                }
                case ARGMIN -> {
                    if (v < acc.data[off]) {
                        acc.data[off] = v;
                        best.data[off] = pos;
                    }
                }
            }
        });
        NdRef result = kind == Kind.ARGMAX || kind == Kind.ARGMIN ? best : acc;
        if (kind == Kind.MEAN) for (int i = 0; i < acc.data.length; i++) acc.data[i] /= count;
        if (keepdims) return result;
        long[] dropped = new long[r - axes.length];
        for (int d = 0, k = 0; d < r; d++) if (Arrays.binarySearch(axes, d) < 0) dropped[k++] = x.shape[d];
        NdRef out = NdRef.zeros(dropped);
        System.arraycopy(result.data, 0, out.data, 0, result.data.length);
        return out;
    }

    private static void check(DType t, long[] shape, int[] axes, boolean keepdims, Kind kind, long seed) {
        Tensor x = Te.placeholder("x", t, shape);
        Tensor y =
                switch (kind) {
                    case SUM -> Reduction.sum(x, keepdims, axes);
                    case MAX -> Reduction.max(x, keepdims, axes);
                    case MIN -> Reduction.min(x, keepdims, axes);
                    case MEAN -> Reduction.mean(x, keepdims, axes);
                    case ARGMAX -> Reduction.argmax(x, axes[0], keepdims);
                    case ARGMIN -> Reduction.argmin(x, axes[0], keepdims);
                };
        List<NDArray> in = OpHarness.randomInputs(List.of(x), seed);
        NDArray got = OpHarness.run(y, List.of(x), in);
        int[] sorted = axes.length == 0 ? allAxes(shape.length) : axes.clone();
        for (int i = 0; i < sorted.length; i++) sorted[i] = (sorted[i] + shape.length) % shape.length;
        Arrays.sort(sorted);
        NdRef want = reference(NdRef.of(in.get(0)), sorted, keepdims, kind);
        boolean exact = kind != Kind.SUM && kind != Kind.MEAN || !t.isFloat();
        got.assertClose(want.toNd(y.dtype()), exact ? 0 : 1e-5, exact ? 0 : 1e-5);
    }

    private static int[] allAxes(int r) {
        int[] a = new int[r];
        for (int d = 0; d < r; d++) a[d] = d;
        return a;
    }

    private static final int[][] AXES_737 = {{0}, {1}, {2}, {-1}, {0, 2}, {1, 2}, {0, 1, 2}, {}};

    @Test
    void sumMaxMinMeanOverAxesWithAndWithoutKeepdims() {
        long seed = 1;
        long[] shape = {7, 5, 3};
        for (Kind k : new Kind[] {Kind.SUM, Kind.MAX, Kind.MIN, Kind.MEAN}) {
            for (int[] axes : AXES_737) {
                for (boolean keep : new boolean[] {false, true}) check(DType.FLOAT32, shape, axes, keep, k, seed++);
            }
        }
    }

    @Test
    void otherShapesAndTypes() {
        check(DType.FLOAT32, new long[] {1, 9}, new int[] {1}, false, Kind.SUM, 100);
        check(DType.FLOAT32, new long[] {2, 3, 4, 5}, new int[] {1, 3}, true, Kind.MEAN, 101);
        check(DType.INT32, new long[] {4, 6}, new int[] {0}, false, Kind.SUM, 102);
        check(DType.INT8, new long[] {4, 6}, new int[] {1}, false, Kind.MAX, 103);
        check(DType.FLOAT64, new long[] {5, 1, 2}, new int[] {}, false, Kind.MIN, 104);
    }

    @Test
    void argmaxArgminWithTiesPickTheSmallestIndex() {
        long seed = 200;
        for (Kind k : new Kind[] {Kind.ARGMAX, Kind.ARGMIN}) {
            for (int axis = -1; axis < 3; axis++) {
                for (boolean keep : new boolean[] {false, true}) {
                    check(DType.INT8, new long[] {7, 5, 3}, new int[] {axis}, keep, k, seed++);
                    check(DType.FLOAT32, new long[] {7, 5, 3}, new int[] {axis}, keep, k, seed++);
                }
            }
        }
        check(DType.INT8, new long[] {40}, new int[] {0}, false, Kind.ARGMAX, 300);
    }

    @Test
    void tiesReallyOccurInTheArgTest() {
        // the input of the last check above (OpHarness seeds input 0 of seed s with s * 31): int8 values lie
        // in [-8, 8), and this row of 40 repeats its maximum, so the tie rule is exercised
        NdRef x = NdRef.of(NDArray.random(DType.INT8, 300 * 31, 40));
        double m = Arrays.stream(x.data).max().orElseThrow();
        assertTrue(Arrays.stream(x.data).filter(v -> v == m).count() > 1, "expected a repeated maximum");
    }
}
