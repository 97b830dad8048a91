package dev.kiln.operators;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.kiln.ir.DType;
import dev.kiln.nn.Linalg;
import dev.kiln.runtime.NDArray;
import dev.kiln.te.Te;
import dev.kiln.te.Tensor;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Linalg operators against plain-Java loops on seeded random inputs (float32: rtol 1e-5, atol 1e-5). */
class LinalgTest {
    private static final double RTOL = 1e-5, ATOL = 1e-5;
    private static final long[][] MNK = {{7, 5, 3}, {1, 9, 4}, {16, 8, 13}, {4, 1, 1}};

    /** A [M,K] or [K,M] (ta); B [K,N] or [N,K] (tb). */
    private static NdRef refMatmul(NdRef a, NdRef b, boolean ta, boolean tb) {
        int m = ta ? a.dim(1) : a.dim(0), k = ta ? a.dim(0) : a.dim(1), n = tb ? b.dim(0) : b.dim(1);
        NdRef c = NdRef.zeros(m, n);
        for (int i = 0; i < m; i++) {
            for (int j = 0; j < n; j++) {
                double s = 0;
                for (int p = 0; p < k; p++) {
                    double av = ta ? a.get(p, i) : a.get(i, p);
                    double bv = tb ? b.get(j, p) : b.get(p, j);
                    s += av * bv;
                }
                c.set(s, i, j);
            }
        }
        return c;
    }

    @Test
    void matmulAllTransposes() {
        long seed = 1;
        for (long[] s : MNK) {
            long m = s[0], n = s[1], k = s[2];
            for (boolean ta : new boolean[] {false, true}) {
                for (boolean tb : new boolean[] {false, true}) {
                    Tensor a = ta ? Te.placeholder("A", DType.FLOAT32, k, m) : Te.placeholder("A", DType.FLOAT32, m, k);
                    Tensor b = tb ? Te.placeholder("B", DType.FLOAT32, n, k) : Te.placeholder("B", DType.FLOAT32, k, n);
                    Tensor c = Linalg.matmul(a, b, ta, tb);
                    List<NDArray> in = OpHarness.randomInputs(List.of(a, b), seed++);
                    NDArray out = OpHarness.run(c, List.of(a, b), in);
                    NdRef want = refMatmul(NdRef.of(in.get(0)), NdRef.of(in.get(1)), ta, tb);
                    out.assertClose(want.toNd(DType.FLOAT32), RTOL, ATOL);
                }
            }
        }
    }

    @Test
    void matmulInt8AccumulatesInInt32() {
        Tensor a = Te.placeholder("A", DType.INT8, 9, 40);
        Tensor b = Te.placeholder("B", DType.INT8, 7, 40);
        Tensor c = Linalg.matmul(a, b, false, true, DType.INT32);
        List<NDArray> in = OpHarness.randomInputs(List.of(a, b), 7);
        NDArray out = OpHarness.run(c, List.of(a, b), in);
        NdRef want = refMatmul(NdRef.of(in.get(0)), NdRef.of(in.get(1)), false, true);
        out.assertClose(want.toNd(DType.INT32), 0, 0);
        // 40 products of values in [-8, 8) reach past the int8 range, so accumulating in int8 would differ
        double maxAbs = 0;
        for (double v : want.data) maxAbs = Math.max(maxAbs, Math.abs(v));
        assertEquals(true, maxAbs > 127, "the test needs sums beyond int8");
    }

    @Test
    void batchMatmulTransposesAndBatchBroadcast() {
        long[][] cases = { // bx, by, N, M, K
            {3, 3, 7, 5, 4}, {1, 1, 6, 9, 5}, {1, 4, 5, 3, 6}, {4, 1, 3, 5, 2}, {2, 2, 1, 1, 7}
        };
        long seed = 100;
        for (long[] s : cases) {
            long bx = s[0], by = s[1], n = s[2], m = s[3], k = s[4];
            for (boolean tx : new boolean[] {false, true}) {
                for (boolean ty : new boolean[] {false, true}) {
                    Tensor x = Te.placeholder("X", DType.FLOAT32, bx, tx ? k : n, tx ? n : k);
                    Tensor y = Te.placeholder("Y", DType.FLOAT32, by, ty ? m : k, ty ? k : m);
                    Tensor z = Linalg.batchMatmul(x, y, tx, ty);
                    List<NDArray> in = OpHarness.randomInputs(List.of(x, y), seed++);
                    NDArray out = OpHarness.run(z, List.of(x, y), in);
                    NdRef xr = NdRef.of(in.get(0)), yr = NdRef.of(in.get(1));
                    long b = Math.max(bx, by);
                    NdRef want = NdRef.zeros(b, n, m);
                    for (int bb = 0; bb < b; bb++) {
                        int xb = bx == 1 ? 0 : bb, yb = by == 1 ? 0 : bb;
                        for (int i = 0; i < n; i++) {
                            for (int j = 0; j < m; j++) {
                                double acc = 0;
                                for (int p = 0; p < k; p++) {
                                    double xv = tx ? xr.get(xb, p, i) : xr.get(xb, i, p);
                                    double yv = ty ? yr.get(yb, j, p) : yr.get(yb, p, j);
                                    acc += xv * yv;
                                }
                                want.set(acc, bb, i, j);
                            }
                        }
                    }
                    out.assertClose(want.toNd(DType.FLOAT32), RTOL, ATOL);
                }
            }
        }
    }

    @Test
    void denseWithAndWithoutBias() {
        long[][] cases = {{4, 6, 3}, {1, 17, 5}, {7, 1, 2}}; // N, K, units
        long seed = 200;
        for (long[] s : cases) {
            long n = s[0], k = s[1], units = s[2];
            Tensor x = Te.placeholder("x", DType.FLOAT32, n, k);
            Tensor w = Te.placeholder("w", DType.FLOAT32, units, k);
            Tensor bias = Te.placeholder("bias", DType.FLOAT32, units);
            for (boolean withBias : new boolean[] {false, true}) {
                List<Tensor> ins = withBias ? List.of(x, w, bias) : List.of(x, w);
                Tensor out = withBias ? Linalg.dense(x, w, bias) : Linalg.dense(x, w);
                List<NDArray> in = OpHarness.randomInputs(ins, seed++);
                NDArray got = OpHarness.run(out, ins, in);
                NdRef xr = NdRef.of(in.get(0)), wr = NdRef.of(in.get(1));
                NdRef want = NdRef.zeros(n, units);
                for (int i = 0; i < n; i++) {
                    for (int u = 0; u < units; u++) {
                        double acc = withBias ? in.get(2).getDouble(u) : 0;
                        for (int p = 0; p < k; p++) acc += xr.get(i, p) * wr.get(u, p);
                        want.set(acc, i, u);
                    }
                }
                got.assertClose(want.toNd(DType.FLOAT32), RTOL, ATOL);
            }
        }
    }

    @Test
    void frobeniusNormPerBatch() {
        long[][] shapes = {{2, 5, 7}, {1, 16, 16}, {3, 1, 9}, {2, 3, 4, 5}};
        long seed = 300;
        for (long[] s : shapes) {
            Tensor a = Te.placeholder("A", DType.FLOAT32, s);
            Tensor c = Linalg.norm(a);
            List<NDArray> in = OpHarness.randomInputs(List.of(a), seed++);
            NDArray got = OpHarness.run(c, List.of(a), in);
            NdRef ar = NdRef.of(in.get(0));
            int r = s.length;
            long[] outShape = java.util.Arrays.copyOf(s, r - 2);
            NdRef want = NdRef.zeros(outShape);
            NdRef.forEach(outShape, b -> {
                double acc = 0;
                int[] idx = java.util.Arrays.copyOf(b, r);
                for (int i = 0; i < s[r - 2]; i++) {
                    for (int j = 0; j < s[r - 1]; j++) {
                        idx[r - 2] = i;
                        idx[r - 1] = j;
                        double v = ar.get(idx);
                        acc += v * v;
                    }
                }
                want.set(Math.sqrt(acc), b);
            });
            got.assertClose(want.toNd(DType.FLOAT32), RTOL, ATOL);
        }
    }
}
