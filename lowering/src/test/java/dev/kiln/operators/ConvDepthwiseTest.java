package dev.kiln.operators;

import static dev.kiln.ir.DType.FLOAT32;
import static dev.kiln.te.Te.placeholder;
import static org.assertj.core.api.Assertions.assertThat;

import dev.kiln.nn.Conv;
import dev.kiln.nn.ConvParams;
import dev.kiln.te.ComputeDAG;
import dev.kiln.te.Tensor;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Depthwise conv2d NHWC (weights [KH, KW, C, M]) and NCHW (weights [C, M, KH, KW]) against plain
 * loops; output channel c * M + m reads input channel c. float32, rtol 1e-5, atol 1e-5.
 */
class ConvDepthwiseTest {

    record Case(String label, int n, int h, int w, int c, int m, int k, int stride, int pad, int dil) {
        int o(int in) {
            return (in + 2 * pad - dil * (k - 1) - 1) / stride + 1;
        }

        ConvParams params() {
            return ConvParams.of(2, stride, pad).withDilation(dil);
        }

        @Override
        public String toString() {
            return label;
        }
    }

    static Stream<Case> cases() {
        return Stream.of(
                new Case("DEP #1 reduced (1,112,112,32,3,1,1) -> (1,9,7,5,3,1,1)", 1, 9, 7, 5, 1, 3, 1, 1, 1),
                new Case(
                        "DEP #2 reduced (1,112,112,64,3,2,1) -> (1,8,9,4,3,2,1), multiplier 2",
                        1,
                        8,
                        9,
                        4,
                        2,
                        3,
                        2,
                        1,
                        1),
                new Case("dilation 2, pad 2, batch 2", 2, 7, 6, 3, 1, 3, 1, 2, 2),
                new Case("multiplier 3, no padding, stride 2", 1, 7, 5, 2, 3, 3, 2, 0, 1));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void nhwcMatchesLoops(Case c) {
        Tensor data = placeholder("data", FLOAT32, c.n, c.h, c.w, c.c);
        Tensor weight = placeholder("weight", FLOAT32, c.k, c.k, c.c, c.m);
        Tensor out = Conv.depthwiseConv2dNhwc(data, weight, c.params());
        int oh = c.o(c.h), ow = c.o(c.w), oc = c.c * c.m;
        assertThat(out.shape().toArray()).containsExactly(c.n, oh, ow, oc);
        assertThat(ComputeDAG.of(out).flopCount()).isEqualTo(2L * c.n * oh * ow * oc * c.k * c.k);
        ConvTesting.check(out, List.of(data, weight), 41, in -> {
            float[] x = in[0], w = in[1];
            float[] r = new float[c.n * oh * ow * oc];
            for (int n = 0; n < c.n; n++)
                for (int y = 0; y < oh; y++)
                    for (int xx = 0; xx < ow; xx++)
                        for (int ch = 0; ch < c.c; ch++)
                            for (int mm = 0; mm < c.m; mm++) {
                                double acc = 0;
                                for (int ky = 0; ky < c.k; ky++)
                                    for (int kx = 0; kx < c.k; kx++) {
                                        int iy = y * c.stride - c.pad + ky * c.dil,
                                                ix = xx * c.stride - c.pad + kx * c.dil;
                                        if (iy < 0 || iy >= c.h || ix < 0 || ix >= c.w) continue;
                                        acc += x[((n * c.h + iy) * c.w + ix) * c.c + ch]
                                                * w[((ky * c.k + kx) * c.c + ch) * c.m + mm];
                                    }
                                r[((n * oh + y) * ow + xx) * oc + ch * c.m + mm] = (float) acc;
                            }
            return r;
        });
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void nchwMatchesLoops(Case c) {
        Tensor data = placeholder("data", FLOAT32, c.n, c.c, c.h, c.w);
        Tensor weight = placeholder("weight", FLOAT32, c.c, c.m, c.k, c.k);
        Tensor out = Conv.depthwiseConv2dNchw(data, weight, c.params());
        int oh = c.o(c.h), ow = c.o(c.w), oc = c.c * c.m;
        assertThat(out.shape().toArray()).containsExactly(c.n, oc, oh, ow);
        ConvTesting.check(out, List.of(data, weight), 42, in -> {
            float[] x = in[0], w = in[1];
            float[] r = new float[c.n * oc * oh * ow];
            for (int n = 0; n < c.n; n++)
                for (int ch = 0; ch < c.c; ch++)
                    for (int mm = 0; mm < c.m; mm++)
                        for (int y = 0; y < oh; y++)
                            for (int xx = 0; xx < ow; xx++) {
                                double acc = 0;
                                for (int ky = 0; ky < c.k; ky++)
                                    for (int kx = 0; kx < c.k; kx++) {
                                        int iy = y * c.stride - c.pad + ky * c.dil,
                                                ix = xx * c.stride - c.pad + kx * c.dil;
                                        if (iy < 0 || iy >= c.h || ix < 0 || ix >= c.w) continue;
                                        acc += x[((n * c.c + ch) * c.h + iy) * c.w + ix]
                                                * w[((ch * c.m + mm) * c.k + ky) * c.k + kx];
                                    }
                                r[((n * oc + ch * c.m + mm) * oh + y) * ow + xx] = (float) acc;
                            }
            return r;
        });
    }
}
