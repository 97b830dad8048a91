package dev.kiln.operators;

import dev.kiln.ir.DType;
import dev.kiln.nn.Layout;
import dev.kiln.runtime.NDArray;
import dev.kiln.te.Te;
import dev.kiln.te.Tensor;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Reshape, transpose and flatten move elements exactly: compared with plain-Java loops, tolerance 0. */
class LayoutTest {
    private static NdRef rowMajorCopy(NdRef x, long[] shape) {
        NdRef out = NdRef.zeros(shape);
        System.arraycopy(x.data, 0, out.data, 0, x.data.length);
        return out;
    }

    private static void checkReshape(long[] from, long[] to, long seed) {
        Tensor x = Te.placeholder("x", DType.FLOAT32, from);
        Tensor y = Layout.reshape(x, to);
        List<NDArray> in = OpHarness.randomInputs(List.of(x), seed);
        NDArray got = OpHarness.run(y, List.of(x), in);
        got.assertClose(rowMajorCopy(NdRef.of(in.get(0)), y.shape().toArray()).toNd(DType.FLOAT32), 0, 0);
    }

    @Test
    void reshape() {
        checkReshape(new long[] {7, 5, 3}, new long[] {3, 35}, 1);
        checkReshape(new long[] {7, 5, 3}, new long[] {105}, 2);
        checkReshape(new long[] {7, 5, 3}, new long[] {5, -1, 7}, 3);
        checkReshape(new long[] {6, 4}, new long[] {2, 3, 2, 2}, 4);
        checkReshape(new long[] {12}, new long[] {1, 12, 1}, 5);
        checkReshape(new long[] {2, 3, 4, 5}, new long[] {4, 30}, 6);
    }

    private static void checkTranspose(long[] shape, int[] perm, long seed) {
        Tensor x = Te.placeholder("x", DType.FLOAT32, shape);
        Tensor y = perm == null ? Layout.transpose(x) : Layout.transpose(x, perm);
        int r = shape.length;
        int[] p = new int[r];
        for (int d = 0; d < r; d++) p[d] = perm == null ? r - 1 - d : (perm[d] + r) % r;
        List<NDArray> in = OpHarness.randomInputs(List.of(x), seed);
        NDArray got = OpHarness.run(y, List.of(x), in);
        NdRef xr = NdRef.of(in.get(0));
        long[] outShape = new long[r];
        for (int d = 0; d < r; d++) outShape[d] = shape[p[d]];
        NdRef want = NdRef.zeros(outShape);
        NdRef.forEach(shape, idx -> {
            int[] o = new int[r];
            for (int d = 0; d < r; d++) o[d] = idx[p[d]];
            want.set(xr.get(idx), o);
        });
        got.assertClose(want.toNd(DType.FLOAT32), 0, 0);
    }

    @Test
    void transposeEveryPermutationOfRank3() {
        int[][] perms = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
        long seed = 10;
        for (int[] p : perms) checkTranspose(new long[] {7, 5, 3}, p, seed++);
    }

    @Test
    void transposeOtherRanks() {
        checkTranspose(new long[] {2, 3, 4, 5}, new int[] {0, 2, 3, 1}, 20); // NCHW -> NHWC
        checkTranspose(new long[] {2, 4, 5, 3}, new int[] {0, -1, 1, 2}, 21); // NHWC -> NCHW
        checkTranspose(new long[] {6, 9}, null, 22);
        checkTranspose(new long[] {1, 8, 1}, null, 23);
    }

    @Test
    void flatten() {
        Tensor x = Te.placeholder("x", DType.FLOAT32, 2, 3, 4, 5);
        List<NDArray> in = OpHarness.randomInputs(List.of(x), 30);
        NdRef xr = NdRef.of(in.get(0));
        OpHarness.run(Layout.flatten(x), List.of(x), in)
                .assertClose(rowMajorCopy(xr, new long[] {2, 60}).toNd(DType.FLOAT32), 0, 0);
        OpHarness.run(Layout.flatten(x, 1, 2), List.of(x), in)
                .assertClose(rowMajorCopy(xr, new long[] {2, 12, 5}).toNd(DType.FLOAT32), 0, 0);
        OpHarness.run(Layout.flatten(x, 0, -1), List.of(x), in)
                .assertClose(rowMajorCopy(xr, new long[] {120}).toNd(DType.FLOAT32), 0, 0);
    }
}
