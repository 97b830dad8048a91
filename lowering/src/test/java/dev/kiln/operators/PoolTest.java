package dev.kiln.operators;

import static dev.kiln.ir.DType.FLOAT32;
import static dev.kiln.te.Te.placeholder;
import static org.assertj.core.api.Assertions.assertThat;

import dev.kiln.nn.Pool;
import dev.kiln.nn.PoolParams;
import dev.kiln.te.Tensor;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Max and average pooling (NCHW and NHWC, both count_include_pad modes) and global pooling
 * against plain loops over the valid window positions. float32, rtol 1e-5, atol 1e-5.
 */
class PoolTest {

    enum Kind {
        MAX,
        AVG_INCLUDE_PAD,
        AVG_EXCLUDE_PAD
    }

    record Case(
            String label,
            int n,
            int c,
            int h,
            int w,
            int kh,
            int kw,
            int sh,
            int sw,
            int pt,
            int pb,
            int pl,
            int pr,
            int dil) {
        int oh() {
            return (h + pt + pb - dil * (kh - 1) - 1) / sh + 1;
        }

        int ow() {
            return (w + pl + pr - dil * (kw - 1) - 1) / sw + 1;
        }

        PoolParams params() {
            return PoolParams.of(2, 1, 1, 0)
                    .withKernel(kh, kw)
                    .withStride(sh, sw)
                    .withPadding(new long[] {pt, pl}, new long[] {pb, pr})
                    .withDilation(dil);
        }

        @Override
        public String toString() {
            return label;
        }
    }

    static Stream<Case> cases() {
        return Stream.of(
                new Case("3x3 stride 2 pad 1 on 7x5", 1, 3, 7, 5, 3, 3, 2, 2, 1, 1, 1, 1, 1),
                new Case("2x2 stride 2 no padding, batch 2", 2, 2, 6, 7, 2, 2, 2, 2, 0, 0, 0, 0, 1),
                new Case("3x3 stride 1 pad 1 dilation 2", 1, 2, 9, 8, 3, 3, 1, 1, 1, 1, 1, 1, 2),
                new Case("3x2 window, asymmetric padding", 1, 1, 5, 6, 3, 2, 2, 1, 0, 1, 1, 1, 1),
                new Case("3x3 stride 1 pad 1 on 4x4", 1, 2, 4, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1));
    }

    static Stream<Object[]> casesAndKinds() {
        return cases().flatMap(c -> Stream.of(Kind.values()).map(k -> new Object[] {c, k}));
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("casesAndKinds")
    void nchwMatchesLoops(Case c, Kind kind) {
        Tensor x = placeholder("x", FLOAT32, c.n, c.c, c.h, c.w);
        Tensor out =
                switch (kind) {
                    case MAX -> Pool.maxPool2dNchw(x, c.params());
                    case AVG_INCLUDE_PAD -> Pool.avgPool2dNchw(x, c.params(), true);
                    case AVG_EXCLUDE_PAD -> Pool.avgPool2dNchw(x, c.params(), false);
                };
        assertThat(out.shape().toArray()).containsExactly(c.n, c.c, c.oh(), c.ow());
        ConvTesting.check(out, List.of(x), 71, in -> reference(c, kind, in[0], false));
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("casesAndKinds")
    void nhwcMatchesLoops(Case c, Kind kind) {
        Tensor x = placeholder("x", FLOAT32, c.n, c.h, c.w, c.c);
        Tensor out =
                switch (kind) {
                    case MAX -> Pool.maxPool2dNhwc(x, c.params());
                    case AVG_INCLUDE_PAD -> Pool.avgPool2dNhwc(x, c.params(), true);
                    case AVG_EXCLUDE_PAD -> Pool.avgPool2dNhwc(x, c.params(), false);
                };
        assertThat(out.shape().toArray()).containsExactly(c.n, c.oh(), c.ow(), c.c);
        ConvTesting.check(out, List.of(x), 72, in -> reference(c, kind, in[0], true));
    }

    @Test
    void stagesAndNames() {
        Tensor x = placeholder("x", FLOAT32, 1, 3, 7, 5);
        assertThat(ConvTesting.stages(Pool.maxPool2dNchw(x, 3, 2, 0))).containsExactly("max_pool2d_nchw");
        assertThat(ConvTesting.stages(Pool.maxPool2dNchw(x, 3, 2, 1))).containsExactly("pad", "max_pool2d_nchw");
        assertThat(ConvTesting.stages(Pool.avgPool2dNchw(x, 3, 2, 1, false)))
                .containsExactly("pad", "avg_pool2d_nchw_sum", "avg_pool2d_nchw");
        assertThat(ConvTesting.stages(Pool.globalAvgPool2dNchw(x)))
                .containsExactly("global_avg_pool2d_nchw_sum", "global_avg_pool2d_nchw");
    }

    @Test
    void convenienceOverloadsMatchLoops() {
        Case c = new Case("3x3 stride 2 pad 1", 1, 2, 7, 6, 3, 3, 2, 2, 1, 1, 1, 1, 1);
        Tensor x = placeholder("x", FLOAT32, c.n, c.h, c.w, c.c);
        ConvTesting.check(Pool.maxPool2dNhwc(x, 3, 2, 1), List.of(x), 73, in -> reference(c, Kind.MAX, in[0], true));
        ConvTesting.check(
                Pool.avgPool2dNhwc(x, 3, 2, 1, false),
                List.of(x),
                74,
                in -> reference(c, Kind.AVG_EXCLUDE_PAD, in[0], true));
    }

    @Test
    void globalPoolingMatchesLoops() {
        int n = 2, ch = 3, h = 5, w = 7;
        Tensor nchw = placeholder("x", FLOAT32, n, ch, h, w);
        Tensor nhwc = placeholder("x", FLOAT32, n, h, w, ch);
        Tensor maxNchw = Pool.globalMaxPool2dNchw(nchw);
        Tensor avgNchw = Pool.globalAvgPool2dNchw(nchw);
        Tensor maxNhwc = Pool.globalMaxPool2dNhwc(nhwc);
        Tensor avgNhwc = Pool.globalAvgPool2dNhwc(nhwc);
        assertThat(maxNchw.shape().toArray()).containsExactly(n, ch, 1, 1);
        assertThat(avgNhwc.shape().toArray()).containsExactly(n, 1, 1, ch);
        for (boolean isMax : new boolean[] {true, false}) {
            ConvTesting.check(isMax ? maxNchw : avgNchw, List.of(nchw), 75, in -> {
                float[] r = new float[n * ch];
                for (int b = 0; b < n; b++)
                    for (int c = 0; c < ch; c++) {
                        double acc = isMax ? Double.NEGATIVE_INFINITY : 0;
                        for (int y = 0; y < h; y++)
                            for (int x = 0; x < w; x++) {
                                float v = in[0][((b * ch + c) * h + y) * w + x];
                                acc = isMax ? Math.max(acc, v) : acc + v;
                            }
                        r[b * ch + c] = (float) (isMax ? acc : acc / (h * w));
                    }
                return r;
            });
            ConvTesting.check(isMax ? maxNhwc : avgNhwc, List.of(nhwc), 76, in -> {
                float[] r = new float[n * ch];
                for (int b = 0; b < n; b++)
                    for (int c = 0; c < ch; c++) {
                        double acc = isMax ? Double.NEGATIVE_INFINITY : 0;
                        for (int y = 0; y < h; y++)
                            for (int x = 0; x < w; x++) {
                                float v = in[0][((b * h + y) * w + x) * ch + c];
                                acc = isMax ? Math.max(acc, v) : acc + v;
                            }
                        r[b * ch + c] = (float) (isMax ? acc : acc / (h * w));
                    }
                return r;
            });
        }
    }

    /** Pooling over the window positions that fall inside the input. */
    private static float[] reference(Case c, Kind kind, float[] x, boolean nhwc) {
        int oh = c.oh(), ow = c.ow();
        float[] r = new float[c.n * c.c * oh * ow];
        for (int n = 0; n < c.n; n++)
            for (int ch = 0; ch < c.c; ch++)
                for (int y = 0; y < oh; y++)
                    for (int xx = 0; xx < ow; xx++) {
                        double max = Double.NEGATIVE_INFINITY, sum = 0;
                        int valid = 0;
                        for (int ky = 0; ky < c.kh; ky++)
                            for (int kx = 0; kx < c.kw; kx++) {
                                int iy = y * c.sh - c.pt + ky * c.dil, ix = xx * c.sw - c.pl + kx * c.dil;
                                if (iy < 0 || iy >= c.h || ix < 0 || ix >= c.w) continue;
                                float v = nhwc
                                        ? x[((n * c.h + iy) * c.w + ix) * c.c + ch]
                                        : x[((n * c.c + ch) * c.h + iy) * c.w + ix];
                                max = Math.max(max, v);
                                sum += v;
                                valid++;
                            }
                        double v =
                                switch (kind) {
                                    case MAX -> max;
                                    case AVG_INCLUDE_PAD -> sum / (c.kh * c.kw);
                                    case AVG_EXCLUDE_PAD -> sum / valid;
                                };
                        int at = nhwc ? ((n * oh + y) * ow + xx) * c.c + ch : ((n * c.c + ch) * oh + y) * ow + xx;
                        r[at] = (float) v;
                    }
        return r;
    }
}
