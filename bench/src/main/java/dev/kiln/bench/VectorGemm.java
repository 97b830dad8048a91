package dev.kiln.bench;

import dev.kiln.ir.KilnException;
import java.util.concurrent.ForkJoinPool;
import java.util.stream.IntStream;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorSpecies;

/**
 * The strongest plain-Java float32 GEMM we know how to write, {@code C = A x B} row-major, as the
 * baseline the JVM backend is measured against. The shape of a BLIS kernel on the Vector API:
 *
 * <ul>
 *   <li>B is packed once into panels of {@link #TILE_COLS} columns ({@code [panel][k][32]}), so the
 *       micro-kernel reads two contiguous vectors per k;
 *   <li>the micro-kernel keeps an {@link #TILE_ROWS} x 32 tile of C in 16 {@code FloatVector} locals
 *       (C2 keeps them in registers) and does 16 FMAs per step of k from 2 vector loads and 8
 *       broadcasts of A;
 *   <li>loops: column blocks of {@link #NC} (B's block stays in L2), k blocks of {@link #KC} (a panel
 *       of B stays in L1), row blocks of 8, panels; C is loaded by the micro-kernel after the first
 *       k block;
 *   <li>row strips of {@link #MC} rows run in parallel on the given fork/join pool.
 * </ul>
 *
 * The tile is two vectors of {@code SPECIES_PREFERRED} wide (32 floats with AVX-512, 16 with AVX2).
 * Needs m a multiple of 8 and n a multiple of the tile width; anything else is a {@link KilnException}.
 */
public final class VectorGemm {
    private VectorGemm() {}

    static final VectorSpecies<Float> S = FloatVector.SPECIES_PREFERRED;
    static final int L = S.length();
    /** Rows of the register tile. */
    public static final int TILE_ROWS = 8;
    /** Columns of the register tile: two vectors. */
    public static final int TILE_COLS = 2 * L;
    /** The k block. */
    static final int KC = 256;
    /** The column block. */
    static final int NC = 512;
    /** Rows of one parallel task. */
    static final int MC = 64;

    /** {@code c[m x n] = a[m x k] * b[k x n]} on {@code pool} (row-major, dense). */
    public static void gemm(float[] a, float[] b, float[] c, int m, int n, int k, ForkJoinPool pool) {
        gemm(a, b, c, m, n, k, new float[k * n], pool);
    }

    /** {@link #gemm}, packing B into {@code packed} (at least {@code k * n} floats, reused across calls). */
    public static void gemm(float[] a, float[] b, float[] c, int m, int n, int k, float[] packed, ForkJoinPool pool) {
        check(a, b, c, m, n, k);
        if (packed.length < (long) k * n) {
            throw new KilnException(
                    "VectorGemm: the packing buffer holds " + packed.length + " floats, B needs " + (long) k * n);
        }
        int panels = n / TILE_COLS;
        pool.submit(() -> IntStream.range(0, panels).parallel().forEach(p -> packPanel(b, packed, p, n, k)))
                .join();
        int strips = (m + MC - 1) / MC;
        pool.submit(() -> IntStream.range(0, strips)
                        .parallel()
                        .forEach(s -> strip(a, packed, c, s * MC, Math.min(m, s * MC + MC), n, k)))
                .join();
    }

    /** Packs columns {@code [p * 32, p * 32 + 32)} of B into {@code packed[p * k * 32 ..]} as [k][32]. */
    static void packPanel(float[] b, float[] packed, int p, int n, int k) {
        int dst = p * k * TILE_COLS, col = p * TILE_COLS;
        for (int kk = 0; kk < k; kk++) {
            int src = kk * n + col;
            for (int v = 0; v < TILE_COLS; v += L) {
                FloatVector.fromArray(S, b, src + v).intoArray(packed, dst + v);
            }
            dst += TILE_COLS;
        }
    }

    /** Rows {@code [m0, m1)} of C. */
    static void strip(float[] a, float[] packed, float[] c, int m0, int m1, int n, int k) {
        for (int jc = 0; jc < n; jc += NC) {
            int jEnd = Math.min(n, jc + NC);
            for (int pc = 0; pc < k; pc += KC) {
                int kc = Math.min(KC, k - pc);
                boolean accumulate = pc > 0;
                for (int i = m0; i < m1; i += TILE_ROWS) {
                    for (int j = jc; j < jEnd; j += TILE_COLS) {
                        int bOff = (j / TILE_COLS) * k * TILE_COLS + pc * TILE_COLS;
                        kernel(a, i * k + pc, k, packed, bOff, c, i * n + j, n, kc, accumulate);
                    }
                }
            }
        }
    }

    /**
     * The 8 x 32 micro-kernel: {@code C[8 x 32] (+)= A[8 x kc] * Bpanel[kc x 32]}, A rows {@code lda}
     * apart from {@code aOff}, the packed panel from {@code bOff}, C rows {@code ldc} apart.
     */
    static void kernel(
            float[] a,
            int aOff,
            int lda,
            float[] bp,
            int bOff,
            float[] c,
            int cOff,
            int ldc,
            int kc,
            boolean accumulate) {
        FloatVector c00, c01, c10, c11, c20, c21, c30, c31, c40, c41, c50, c51, c60, c61, c70, c71;
        if (accumulate) {
            c00 = FloatVector.fromArray(S, c, cOff);
            c01 = FloatVector.fromArray(S, c, cOff + L);
            c10 = FloatVector.fromArray(S, c, cOff + ldc);
            c11 = FloatVector.fromArray(S, c, cOff + ldc + L);
            c20 = FloatVector.fromArray(S, c, cOff + 2 * ldc);
            c21 = FloatVector.fromArray(S, c, cOff + 2 * ldc + L);
            c30 = FloatVector.fromArray(S, c, cOff + 3 * ldc);
            c31 = FloatVector.fromArray(S, c, cOff + 3 * ldc + L);
            c40 = FloatVector.fromArray(S, c, cOff + 4 * ldc);
            c41 = FloatVector.fromArray(S, c, cOff + 4 * ldc + L);
            c50 = FloatVector.fromArray(S, c, cOff + 5 * ldc);
            c51 = FloatVector.fromArray(S, c, cOff + 5 * ldc + L);
            c60 = FloatVector.fromArray(S, c, cOff + 6 * ldc);
            c61 = FloatVector.fromArray(S, c, cOff + 6 * ldc + L);
            c70 = FloatVector.fromArray(S, c, cOff + 7 * ldc);
            c71 = FloatVector.fromArray(S, c, cOff + 7 * ldc + L);
        } else {
            FloatVector z = FloatVector.zero(S);
            c00 = z;
            c01 = z;
            c10 = z;
            c11 = z;
            c20 = z;
            c21 = z;
            c30 = z;
            c31 = z;
            c40 = z;
            c41 = z;
            c50 = z;
            c51 = z;
            c60 = z;
            c61 = z;
            c70 = z;
            c71 = z;
        }
        int a0 = aOff, a1 = a0 + lda, a2 = a1 + lda, a3 = a2 + lda, a4 = a3 + lda, a5 = a4 + lda, a6 = a5 + lda;
        int a7 = a6 + lda;
        for (int kk = 0; kk < kc; kk++) {
            int bo = bOff + kk * TILE_COLS; // a function of kk, so C2 can take the range checks out of the loop
            FloatVector b0 = FloatVector.fromArray(S, bp, bo);
            FloatVector b1 = FloatVector.fromArray(S, bp, bo + L);
            FloatVector x = FloatVector.broadcast(S, a[a0 + kk]);
            c00 = x.fma(b0, c00);
            c01 = x.fma(b1, c01);
            x = FloatVector.broadcast(S, a[a1 + kk]);
            c10 = x.fma(b0, c10);
            c11 = x.fma(b1, c11);
            x = FloatVector.broadcast(S, a[a2 + kk]);
            c20 = x.fma(b0, c20);
            c21 = x.fma(b1, c21);
            x = FloatVector.broadcast(S, a[a3 + kk]);
            c30 = x.fma(b0, c30);
            c31 = x.fma(b1, c31);
            x = FloatVector.broadcast(S, a[a4 + kk]);
            c40 = x.fma(b0, c40);
            c41 = x.fma(b1, c41);
            x = FloatVector.broadcast(S, a[a5 + kk]);
            c50 = x.fma(b0, c50);
            c51 = x.fma(b1, c51);
            x = FloatVector.broadcast(S, a[a6 + kk]);
            c60 = x.fma(b0, c60);
            c61 = x.fma(b1, c61);
            x = FloatVector.broadcast(S, a[a7 + kk]);
            c70 = x.fma(b0, c70);
            c71 = x.fma(b1, c71);
        }
        c00.intoArray(c, cOff);
        c01.intoArray(c, cOff + L);
        c10.intoArray(c, cOff + ldc);
        c11.intoArray(c, cOff + ldc + L);
        c20.intoArray(c, cOff + 2 * ldc);
        c21.intoArray(c, cOff + 2 * ldc + L);
        c30.intoArray(c, cOff + 3 * ldc);
        c31.intoArray(c, cOff + 3 * ldc + L);
        c40.intoArray(c, cOff + 4 * ldc);
        c41.intoArray(c, cOff + 4 * ldc + L);
        c50.intoArray(c, cOff + 5 * ldc);
        c51.intoArray(c, cOff + 5 * ldc + L);
        c60.intoArray(c, cOff + 6 * ldc);
        c61.intoArray(c, cOff + 6 * ldc + L);
        c70.intoArray(c, cOff + 7 * ldc);
        c71.intoArray(c, cOff + 7 * ldc + L);
    }

    private static void check(float[] a, float[] b, float[] c, int m, int n, int k) {
        if (m <= 0 || n <= 0 || k <= 0) {
            throw new KilnException("VectorGemm: m, n, k must be positive (m " + m + ", n " + n + ", k " + k + ")");
        }
        if (m % TILE_ROWS != 0) {
            throw new KilnException("VectorGemm: m = " + m + " is not a multiple of the tile's " + TILE_ROWS + " rows");
        }
        if (n % TILE_COLS != 0) {
            throw new KilnException("VectorGemm: n = " + n + " is not a multiple of the tile's " + TILE_COLS
                    + " columns (two " + S + " vectors)");
        }
        if ((long) m * k > a.length || (long) k * n > b.length || (long) m * n > c.length) {
            throw new KilnException("VectorGemm: arrays too short for m " + m + ", n " + n + ", k " + k + " (A "
                    + a.length + ", B " + b.length + ", C " + c.length + ")");
        }
    }
}
