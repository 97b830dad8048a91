package dev.kiln.schedule;

import dev.kiln.ir.DType;
import dev.kiln.runtime.NDArray;
import java.util.SplittableRandom;

/** Inputs over the types' full ranges and plain-Java references for the low-precision tests. */
public final class LowPrecisionData {
    private LowPrecisionData() {}

    /** A seeded array of {@code t} over its full range (uint8 0..255, int8 -128..127). */
    public static NDArray full(DType t, long seed, long... shape) {
        NDArray a = NDArray.allocate(t, shape);
        SplittableRandom r = new SplittableRandom(seed);
        for (long i = 0; i < a.numElements(); i++) {
            long v =
                    t == DType.UINT8 ? r.nextInt(256) : t == DType.INT8 ? r.nextInt(256) - 128 : r.nextInt(-1000, 1000);
            a.setLongFlat(v, i);
        }
        return a;
    }

    /** {@code out[m, n] = sum_k x[m, k] * w[n, k]} in int32 arithmetic (wrapping like the hardware). */
    public static long[] denseInt(NDArray x, NDArray w) {
        int m = (int) x.shape()[0], k = (int) x.shape()[1], n = (int) w.shape()[0];
        long[] out = new long[m * n];
        for (int i = 0; i < m; i++)
            for (int j = 0; j < n; j++) {
                int acc = 0;
                for (int q = 0; q < k; q++) acc += (int) x.getLong(i, q) * (int) w.getLong(j, q);
                out[i * n + j] = acc;
            }
        return out;
    }

    /** {@code out[m, n] = sum_k x[m, k] * w[n, k]} in double, as a float32 array. */
    public static NDArray denseFloat(NDArray x, NDArray w) {
        int m = (int) x.shape()[0], k = (int) x.shape()[1], n = (int) w.shape()[0];
        NDArray out = NDArray.allocate(DType.FLOAT32, m, n);
        for (int i = 0; i < m; i++)
            for (int j = 0; j < n; j++) {
                double acc = 0;
                for (int q = 0; q < k; q++) acc += x.getDouble(i, q) * w.getDouble(j, q);
                out.setDouble(acc, i, j);
            }
        return out;
    }
}
