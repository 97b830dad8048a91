package dev.kiln.operators;

import static dev.kiln.ir.DType.FLOAT32;
import static dev.kiln.te.Te.placeholder;
import static org.assertj.core.api.Assertions.assertThat;

import dev.kiln.nn.ConvParams;
import dev.kiln.nn.ConvTranspose;
import dev.kiln.te.ComputeDAG;
import dev.kiln.te.Tensor;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Transposed conv2d NHWC (weights [KH, KW, CI, CO/groups]) and NCHW (weights [CI, CO/groups, KH, KW])
 * against PyTorch's ConvTranspose2d semantics written as a scatter: each input element adds
 * {@code x * w[kh, kw]} to output (ih * stride - padTop + kh * dilation, ...). float32, rtol 1e-5, atol 1e-5.
 */
class ConvTransposeTest {

    record Case(
            String label,
            int n,
            int h,
            int w,
            int ci,
            int co,
            int k,
            int stride,
            int pt,
            int pb,
            int pl,
            int pr,
            int dil,
            int outPad,
            int groups) {
        int oh() {
            return (h - 1) * stride - pt - pb + dil * (k - 1) + outPad + 1;
        }

        int ow() {
            return (w - 1) * stride - pl - pr + dil * (k - 1) + outPad + 1;
        }

        ConvParams params() {
            return ConvParams.of(2, stride, 0)
                    .withPadding2d(pt, pb, pl, pr)
                    .withDilation(dil)
                    .withGroups(groups);
        }

        @Override
        public String toString() {
            return label;
        }
    }

    static Stream<Case> cases() {
        return Stream.of(
                new Case(
                        "T2D #1 reduced (1,4,4,512,256,4,2,1) -> (1,4,4,6,5,4,2,1)",
                        1,
                        4,
                        4,
                        6,
                        5,
                        4,
                        2,
                        1,
                        1,
                        1,
                        1,
                        1,
                        0,
                        1),
                new Case("odd 5x3, 3x3, stride 1, no padding", 1, 5, 3, 3, 4, 3, 1, 0, 0, 0, 0, 1, 0, 1),
                new Case("stride 2, pad 1, output padding 1, batch 2", 2, 3, 4, 4, 3, 3, 2, 1, 1, 1, 1, 1, 1, 1),
                new Case("dilation 2, pad 2", 1, 4, 5, 2, 3, 3, 1, 2, 2, 2, 2, 2, 0, 1),
                new Case("padding larger than the kernel", 1, 6, 6, 2, 3, 2, 2, 3, 3, 3, 3, 1, 0, 1),
                new Case("groups 2, stride 2, output padding 1", 1, 5, 4, 4, 6, 3, 2, 1, 1, 1, 1, 1, 1, 2),
                new Case("asymmetric padding, stride 3", 1, 4, 3, 3, 2, 3, 3, 0, 1, 2, 1, 1, 0, 1));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void nhwcMatchesScatter(Case c) {
        Tensor data = placeholder("data", FLOAT32, c.n, c.h, c.w, c.ci);
        Tensor weight = placeholder("weight", FLOAT32, c.k, c.k, c.ci, c.co / c.groups);
        Tensor out = ConvTranspose.conv2dTransposeNhwc(data, weight, c.params(), c.outPad);
        assertThat(out.shape().toArray()).containsExactly(c.n, c.oh(), c.ow(), c.co);
        assertThat(ComputeDAG.of(out).flopCount())
                .isEqualTo(2L * c.n * c.oh() * c.ow() * c.co * (c.ci / c.groups) * c.k * c.k);
        ConvTesting.check(out, List.of(data, weight), 51, in -> scatter(c, in[0], in[1], true));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void nchwMatchesScatter(Case c) {
        Tensor data = placeholder("data", FLOAT32, c.n, c.ci, c.h, c.w);
        Tensor weight = placeholder("weight", FLOAT32, c.ci, c.co / c.groups, c.k, c.k);
        Tensor out = ConvTranspose.conv2dTransposeNchw(data, weight, c.params(), c.outPad);
        assertThat(out.shape().toArray()).containsExactly(c.n, c.co, c.oh(), c.ow());
        ConvTesting.check(out, List.of(data, weight), 52, in -> scatter(c, in[0], in[1], false));
    }

    @Test
    void stageStructure() {
        Tensor data = placeholder("data", FLOAT32, 1, 4, 4, 3);
        Tensor weight = placeholder("weight", FLOAT32, 3, 3, 3, 2);
        // stride 1 and padding = K - 1: the dilate/pad stage would be the identity
        assertThat(ConvTesting.stages(ConvTranspose.conv2dTransposeNhwc(data, weight, 1, 2)))
                .containsExactly("conv2d_transpose_nhwc");
        Tensor t2d = ConvTranspose.conv2dTransposeNhwc(data, weight, 2, 1);
        assertThat(ConvTesting.stages(t2d)).containsExactly("dilate_pad", "conv2d_transpose_nhwc");
        // (4 - 1) * 2 + 1 = 7 dilated rows, plus K - 1 - pad = 1 on each side
        assertThat(t2d.op().inputTensors().get(0).shape().toArray()).containsExactly(1, 9, 9, 3);
    }

    @Test
    void identityStageCaseMatchesScatter() {
        Case c = new Case("stride 1, pad K-1", 1, 5, 4, 3, 2, 3, 1, 2, 2, 2, 2, 1, 0, 1);
        Tensor data = placeholder("data", FLOAT32, c.n, c.h, c.w, c.ci);
        Tensor weight = placeholder("weight", FLOAT32, c.k, c.k, c.ci, c.co);
        Tensor out = ConvTranspose.conv2dTransposeNhwc(data, weight, 1, 2);
        ConvTesting.check(out, List.of(data, weight), 53, in -> scatter(c, in[0], in[1], true));
    }

    private static float[] scatter(Case c, float[] x, float[] w, boolean nhwc) {
        int oh = c.oh(), ow = c.ow(), cig = c.ci / c.groups, cog = c.co / c.groups;
        double[] acc = new double[c.n * c.co * oh * ow];
        for (int n = 0; n < c.n; n++)
            for (int i = 0; i < c.ci; i++)
                for (int y = 0; y < c.h; y++)
                    for (int xx = 0; xx < c.w; xx++) {
                        float v = nhwc
                                ? x[((n * c.h + y) * c.w + xx) * c.ci + i]
                                : x[((n * c.ci + i) * c.h + y) * c.w + xx];
                        for (int ky = 0; ky < c.k; ky++)
                            for (int kx = 0; kx < c.k; kx++) {
                                int oy = y * c.stride - c.pt + ky * c.dil, ox = xx * c.stride - c.pl + kx * c.dil;
                                if (oy < 0 || oy >= oh || ox < 0 || ox >= ow) continue;
                                for (int j = 0; j < cog; j++) {
                                    int o = (i / cig) * cog + j;
                                    float wv = nhwc
                                            ? w[((ky * c.k + kx) * c.ci + i) * cog + j]
                                            : w[((i * cog + j) * c.k + ky) * c.k + kx];
                                    int at = nhwc
                                            ? ((n * oh + oy) * ow + ox) * c.co + o
                                            : ((n * c.co + o) * oh + oy) * ow + ox;
                                    acc[at] += v * wv;
                                }
                            }
                    }
        float[] r = new float[acc.length];
        for (int i = 0; i < r.length; i++) r[i] = (float) acc[i];
        return r;
    }
}
