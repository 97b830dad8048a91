package dev.kiln.bench;

import java.util.stream.IntStream;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorSpecies;

/**
 * What a Java user would write instead of Kiln for {@code C = A x B} (row-major float32):
 * a naive loop, and a blocked, parallel Vector API loop with a register tile.
 */
final class MatmulBaselines {
    private MatmulBaselines() {}

    private static final VectorSpecies<Float> S = FloatVector.SPECIES_PREFERRED;

    /** The i-k-j triple loop a careful Java user writes first (single-threaded). */
    static void naive(float[] a, float[] b, float[] c, int n) {
        java.util.Arrays.fill(c, 0f);
        for (int i = 0; i < n; i++) {
            for (int k = 0; k < n; k++) {
                float x = a[i * n + k];
                int bo = k * n, co = i * n;
                for (int j = 0; j < n; j++) c[co + j] += x * b[bo + j];
            }
        }
    }

    /**
     * Blocked Vector API matmul: 4 rows x 2 vectors of C accumulate in registers over all of k,
     * rows in parallel over the common fork/join pool. Needs n divisible by 4 and 2 vector lengths.
     */
    static void vectorApi(float[] a, float[] b, float[] c, int n) {
        int lanes = S.length();
        int cols = 2 * lanes;
        IntStream.range(0, n / 4).parallel().forEach(ib -> {
            int i0 = ib * 4;
            for (int j = 0; j < n; j += cols) {
                FloatVector c00 = FloatVector.zero(S), c01 = FloatVector.zero(S);
                FloatVector c10 = FloatVector.zero(S), c11 = FloatVector.zero(S);
                FloatVector c20 = FloatVector.zero(S), c21 = FloatVector.zero(S);
                FloatVector c30 = FloatVector.zero(S), c31 = FloatVector.zero(S);
                for (int k = 0; k < n; k++) {
                    FloatVector b0 = FloatVector.fromArray(S, b, k * n + j);
                    FloatVector b1 = FloatVector.fromArray(S, b, k * n + j + lanes);
                    FloatVector a0 = FloatVector.broadcast(S, a[i0 * n + k]);
                    FloatVector a1 = FloatVector.broadcast(S, a[(i0 + 1) * n + k]);
                    FloatVector a2 = FloatVector.broadcast(S, a[(i0 + 2) * n + k]);
                    FloatVector a3 = FloatVector.broadcast(S, a[(i0 + 3) * n + k]);
                    c00 = a0.fma(b0, c00);
                    c01 = a0.fma(b1, c01);
                    c10 = a1.fma(b0, c10);
                    c11 = a1.fma(b1, c11);
                    c20 = a2.fma(b0, c20);
                    c21 = a2.fma(b1, c21);
                    c30 = a3.fma(b0, c30);
                    c31 = a3.fma(b1, c31);
                }
                c00.intoArray(c, i0 * n + j);
                c01.intoArray(c, i0 * n + j + lanes);
                c10.intoArray(c, (i0 + 1) * n + j);
                c11.intoArray(c, (i0 + 1) * n + j + lanes);
                c20.intoArray(c, (i0 + 2) * n + j);
                c21.intoArray(c, (i0 + 2) * n + j + lanes);
                c30.intoArray(c, (i0 + 3) * n + j);
                c31.intoArray(c, (i0 + 3) * n + j + lanes);
            }
        });
    }
}
