package dev.kiln.operators;

import static dev.kiln.ir.DType.FLOAT32;
import static dev.kiln.te.Te.placeholder;
import static org.assertj.core.api.Assertions.assertThat;

import dev.kiln.nn.Conv;
import dev.kiln.nn.ConvParams;
import dev.kiln.te.ComputeDAG;
import dev.kiln.te.ComputeOp;
import dev.kiln.te.Tensor;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * conv2d NHWC (weights HWIO) and NCHW (weights OIHW) against plain loops that skip the
 * out-of-bounds taps (no padded copy), float32, rtol 1e-5, atol 1e-5.
 */
class Conv2dTest {

    /** One conv2d configuration: padding per side (top, bottom, left, right), stride and dilation per axis. */
    record Case(
            String label,
            int n,
            int h,
            int w,
            int ci,
            int co,
            int kh,
            int kw,
            int sh,
            int sw,
            int pt,
            int pb,
            int pl,
            int pr,
            int dh,
            int dw,
            int groups) {
        int oh() {
            return (h + pt + pb - dh * (kh - 1) - 1) / sh + 1;
        }

        int ow() {
            return (w + pl + pr - dw * (kw - 1) - 1) / sw + 1;
        }

        ConvParams params() {
            return ConvParams.of(2, 1, 0)
                    .withStride(sh, sw)
                    .withPadding2d(pt, pb, pl, pr)
                    .withDilation(dh, dw)
                    .withGroups(groups);
        }

        @Override
        public String toString() {
            return label;
        }
    }

    static Stream<Case> cases() {
        return Stream.of(
                new Case("odd 7x5x3, 3x3, no padding", 1, 7, 5, 3, 4, 3, 3, 1, 1, 0, 0, 0, 0, 1, 1, 1),
                new Case("batch 2, stride 2, pad 1", 2, 7, 5, 3, 4, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1),
                new Case(
                        "3x2 kernel, asymmetric pad, dilation 2, groups 2",
                        1,
                        9,
                        8,
                        4,
                        6,
                        3,
                        2,
                        1,
                        1,
                        1,
                        2,
                        0,
                        1,
                        2,
                        2,
                        2),
                new Case("groups 4, stride 2, pad 1", 1, 6, 7, 8, 8, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 4),
                new Case("1x1 kernel", 1, 5, 5, 2, 3, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1),
                new Case("stride (2, 1), dilation (1, 2), pad 2", 1, 8, 7, 3, 5, 3, 3, 2, 1, 2, 2, 2, 2, 1, 2, 1),
                new Case(
                        "C2D #1 reduced (1,224,224,3,64,7,2,3) -> (1,23,23,3,8,7,2,3)",
                        1,
                        23,
                        23,
                        3,
                        8,
                        7,
                        7,
                        2,
                        2,
                        3,
                        3,
                        3,
                        3,
                        1,
                        1,
                        1));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void nhwcMatchesLoops(Case c) {
        Tensor data = placeholder("data", FLOAT32, c.n, c.h, c.w, c.ci);
        Tensor weight = placeholder("weight", FLOAT32, c.kh, c.kw, c.ci / c.groups, c.co);
        Tensor out = Conv.conv2dNhwc(data, weight, c.params());
        assertThat(out.shape().toArray()).containsExactly(c.n, c.oh(), c.ow(), c.co);
        ConvTesting.check(out, List.of(data, weight), 11, in -> nhwcReference(c, in[0], in[1]));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void nchwMatchesLoops(Case c) {
        Tensor data = placeholder("data", FLOAT32, c.n, c.ci, c.h, c.w);
        Tensor weight = placeholder("weight", FLOAT32, c.co, c.ci / c.groups, c.kh, c.kw);
        Tensor out = Conv.conv2dNchw(data, weight, c.params());
        assertThat(out.shape().toArray()).containsExactly(c.n, c.co, c.oh(), c.ow());
        ConvTesting.check(out, List.of(data, weight), 12, in -> nchwReference(c, in[0], in[1]));
    }

    @Test
    void symmetricConvenienceEqualsParams() {
        Tensor data = placeholder("data", FLOAT32, 1, 7, 5, 3);
        Tensor weight = placeholder("weight", FLOAT32, 3, 3, 3, 2);
        Case c = new Case("stride 2 pad 1", 1, 7, 5, 3, 2, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1);
        Tensor out = Conv.conv2dNhwc(data, weight, 2, 1);
        ConvTesting.check(out, List.of(data, weight), 13, in -> nhwcReference(c, in[0], in[1]));
    }

    @Test
    void flopCountIsTwoMacsPerOutputTap() {
        for (Case c : cases().toList()) {
            Tensor nhwc = Conv.conv2dNhwc(
                    placeholder("d", FLOAT32, c.n, c.h, c.w, c.ci),
                    placeholder("k", FLOAT32, c.kh, c.kw, c.ci / c.groups, c.co),
                    c.params());
            Tensor nchw = Conv.conv2dNchw(
                    placeholder("d", FLOAT32, c.n, c.ci, c.h, c.w),
                    placeholder("k", FLOAT32, c.co, c.ci / c.groups, c.kh, c.kw),
                    c.params());
            long expected = 2L * c.n * c.oh() * c.ow() * c.co * (c.ci / c.groups) * c.kh * c.kw;
            assertThat(ComputeDAG.of(nhwc).flopCount()).as(c.label).isEqualTo(expected);
            assertThat(ComputeDAG.of(nchw).flopCount()).as(c.label).isEqualTo(expected);
        }
    }

    @Test
    void padStageOnlyWhenPaddingIsNonZero() {
        Tensor data = placeholder("data", FLOAT32, 1, 7, 5, 3);
        Tensor weight = placeholder("weight", FLOAT32, 3, 3, 3, 4);
        Tensor plain = Conv.conv2dNhwc(data, weight, 1, 0);
        Tensor padded = Conv.conv2dNhwc(data, weight, 1, 1);
        assertThat(ConvTesting.stages(plain)).containsExactly("conv2d_nhwc");
        assertThat(ConvTesting.stages(padded)).containsExactly("pad", "conv2d_nhwc");
        assertThat(((ComputeOp) padded.op()).tag()).isEqualTo("conv2d_nhwc");
        assertThat(padded.op().inputTensors().get(0).shape().toArray()).containsExactly(1, 9, 7, 3);
        assertThat(ConvTesting.stages(Conv.conv2dNchw(
                        placeholder("d", FLOAT32, 1, 3, 7, 5), placeholder("k", FLOAT32, 4, 3, 3, 3), 2, 0)))
                .containsExactly("conv2d_nchw");
    }

    private static float[] nhwcReference(Case c, float[] x, float[] k) {
        int oh = c.oh(), ow = c.ow(), cig = c.ci / c.groups, cog = c.co / c.groups;
        float[] out = new float[c.n * oh * ow * c.co];
        for (int n = 0; n < c.n; n++) {
            for (int y = 0; y < oh; y++) {
                for (int xx = 0; xx < ow; xx++) {
                    for (int o = 0; o < c.co; o++) {
                        int g = o / cog;
                        double acc = 0;
                        for (int ky = 0; ky < c.kh; ky++) {
                            int iy = y * c.sh - c.pt + ky * c.dh;
                            if (iy < 0 || iy >= c.h) continue;
                            for (int kx = 0; kx < c.kw; kx++) {
                                int ix = xx * c.sw - c.pl + kx * c.dw;
                                if (ix < 0 || ix >= c.w) continue;
                                for (int i = 0; i < cig; i++) {
                                    int ch = g * cig + i;
                                    acc += x[((n * c.h + iy) * c.w + ix) * c.ci + ch]
                                            * k[((ky * c.kw + kx) * cig + i) * c.co + o];
                                }
                            }
                        }
                        out[((n * oh + y) * ow + xx) * c.co + o] = (float) acc;
                    }
                }
            }
        }
        return out;
    }

    private static float[] nchwReference(Case c, float[] x, float[] k) {
        int oh = c.oh(), ow = c.ow(), cig = c.ci / c.groups, cog = c.co / c.groups;
        float[] out = new float[c.n * c.co * oh * ow];
        for (int n = 0; n < c.n; n++) {
            for (int o = 0; o < c.co; o++) {
                int g = o / cog;
                for (int y = 0; y < oh; y++) {
                    for (int xx = 0; xx < ow; xx++) {
                        double acc = 0;
                        for (int i = 0; i < cig; i++) {
                            int ch = g * cig + i;
                            for (int ky = 0; ky < c.kh; ky++) {
                                int iy = y * c.sh - c.pt + ky * c.dh;
                                if (iy < 0 || iy >= c.h) continue;
                                for (int kx = 0; kx < c.kw; kx++) {
                                    int ix = xx * c.sw - c.pl + kx * c.dw;
                                    if (ix < 0 || ix >= c.w) continue;
                                    acc += x[((n * c.ci + ch) * c.h + iy) * c.w + ix]
                                            * k[((o * cig + i) * c.kh + ky) * c.kw + kx];
                                }
                            }
                        }
                        out[((n * c.co + o) * oh + y) * ow + xx] = (float) acc;
                    }
                }
            }
        }
        return out;
    }
}
