package dev.kiln.bench;

/**
 * What a Java user writes first instead of Kiln for {@code C = A x B} (row-major float32): a naive
 * loop. The strong plain-Java baseline is {@link VectorGemm}.
 */
final class MatmulBaselines {
    private MatmulBaselines() {}

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
}
