package dev.kiln.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.kiln.ir.KilnException;
import java.util.SplittableRandom;
import java.util.concurrent.ForkJoinPool;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The Vector API baselines against plain Java loops (double accumulation) on seeded random inputs. */
class VectorBaselinesTest {
    private static ForkJoinPool pool;

    @BeforeAll
    static void start() {
        pool = new ForkJoinPool(2);
    }

    @AfterAll
    static void stop() {
        pool.shutdown();
    }

    static float[] random(int n, long seed) {
        SplittableRandom r = new SplittableRandom(seed);
        float[] a = new float[n];
        for (int i = 0; i < n; i++) a[i] = (float) (r.nextDouble() * 2 - 1);
        return a;
    }

    @Test
    void gemmMatchesPlainJava() {
        int w = VectorGemm.TILE_COLS;
        // k crosses the k block (256) unevenly; n spans more than one column block (512)
        int[][] shapes = {{8, w, 1}, {16, 3 * w, 37}, {72, 2 * w, 300}, {64, 20 * w, 260}};
        long seed = 11;
        for (int[] sh : shapes) {
            int m = sh[0], n = sh[1], k = sh[2];
            float[] a = random(m * k, seed++), b = random(k * n, seed++), c = new float[m * n];
            VectorGemm.gemm(a, b, c, m, n, k, pool);
            for (int i = 0; i < m; i++) {
                for (int j = 0; j < n; j++) {
                    double ref = 0;
                    for (int p = 0; p < k; p++) ref += (double) a[i * k + p] * b[p * n + j];
                    // float32 accumulation over k terms of size <= 1
                    assertEquals(
                            ref, c[i * n + j], 1e-5 * k + 1e-6, "C[" + i + ", " + j + "] of " + m + "x" + n + "x" + k);
                }
            }
        }
    }

    @Test
    void gemmRejectsShapesOffTheTile() {
        int w = VectorGemm.TILE_COLS;
        float[] x = new float[64 * 64 * 4];
        assertThrows(KilnException.class, () -> VectorGemm.gemm(x, x, x, 12, w, 8, pool));
        assertThrows(KilnException.class, () -> VectorGemm.gemm(x, x, x, 8, w + 1, 8, pool));
    }

    @Test
    void convMatchesPlainJava() {
        int o = VectorConv.TILE_O;
        VectorConv.Shape[] shapes = {
            new VectorConv.Shape(1, 9, 8, 5, o, 3, 3, 1), // border tiles on both sides
            new VectorConv.Shape(2, 6, 14, 3, 2 * o, 3, 3, 0), // no padding, batch of two
            new VectorConv.Shape(1, 5, 8, 7, o, 1, 1, 0), // 1x1
            new VectorConv.Shape(1, 7, 12, 4, o, 5, 5, 2),
        };
        long seed = 41;
        for (VectorConv.Shape s : shapes) {
            float[] in = random(s.n() * s.h() * s.w() * s.ci(), seed++);
            float[] w = random(s.kh() * s.kw() * s.ci() * s.co(), seed++);
            float[] out = new float[s.n() * s.oh() * s.ow() * s.co()];
            VectorConv.conv2d(in, w, out, s, pool);
            int terms = s.kh() * s.kw() * s.ci();
            for (int b = 0; b < s.n(); b++) {
                for (int y = 0; y < s.oh(); y++) {
                    for (int x = 0; x < s.ow(); x++) {
                        for (int oc = 0; oc < s.co(); oc++) {
                            double ref = 0;
                            for (int r = 0; r < s.kh(); r++) {
                                for (int q = 0; q < s.kw(); q++) {
                                    int iy = y + r - s.pad(), ix = x + q - s.pad();
                                    if (iy < 0 || iy >= s.h() || ix < 0 || ix >= s.w()) continue;
                                    for (int c = 0; c < s.ci(); c++) {
                                        ref += (double) in[((b * s.h() + iy) * s.w() + ix) * s.ci() + c]
                                                * w[((r * s.kw() + q) * s.ci() + c) * s.co() + oc];
                                    }
                                }
                            }
                            float got = out[((b * s.oh() + y) * s.ow() + x) * s.co() + oc];
                            assertEquals(ref, got, 1e-5 * terms + 1e-6, s + " at " + b + "," + y + "," + x + "," + oc);
                        }
                    }
                }
            }
        }
    }

    @Test
    void convRejectsWidthsOffTheTile() {
        float[] x = new float[4096];
        VectorConv.Shape s = new VectorConv.Shape(1, 5, 5, 2, VectorConv.TILE_O, 3, 3, 1);
        assertThrows(KilnException.class, () -> VectorConv.conv2d(x, x, x, s, pool));
    }
}
