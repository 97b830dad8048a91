package dev.kiln.operators;

import static dev.kiln.ir.DType.FLOAT32;
import static dev.kiln.te.Te.placeholder;
import static org.assertj.core.api.Assertions.assertThat;

import dev.kiln.nn.CapsuleConv;
import dev.kiln.nn.ConvParams;
import dev.kiln.te.ComputeDAG;
import dev.kiln.te.Tensor;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Capsule conv2d NHWIJC (data [N, H, W, CAP, CAP, CI], weight [K, K, CAP, CAP, CI, CO]) against
 * plain loops: out[n, oh, ow, i, j, co] = sum of in[n, ., ., i, k, rc] * w[., ., k, j, rc, co].
 * float32, rtol 1e-5, atol 1e-5.
 */
class ConvCapsuleTest {

    record Case(String label, int n, int h, int w, int cap, int ci, int co, int k, int stride, int pad, int dil) {
        int o(int in) {
            return (in + 2 * pad - dil * (k - 1) - 1) / stride + 1;
        }

        @Override
        public String toString() {
            return label;
        }
    }

    static Stream<Case> cases() {
        return Stream.of(
                new Case(
                        "CAP #1 reduced (1,16,16,32,32,3,2,1) -> (1,5,5,3,2,3,2,1), capsule 2",
                        1,
                        5,
                        5,
                        2,
                        3,
                        2,
                        3,
                        2,
                        1,
                        1),
                new Case(
                        "CAP #2 reduced (1,8,8,32,32,3,1,1) -> (1,4,3,2,3,3,1,1), capsule 4",
                        1,
                        4,
                        3,
                        4,
                        2,
                        3,
                        3,
                        1,
                        1,
                        1),
                new Case("capsule 3, 2x2 kernel, no padding, batch 2", 2, 6, 5, 3, 2, 2, 2, 1, 0, 1),
                new Case("dilation 2, pad 2", 1, 5, 6, 2, 2, 3, 3, 1, 2, 2));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void nhwijcMatchesLoops(Case c) {
        Tensor data = placeholder("data", FLOAT32, c.n, c.h, c.w, c.cap, c.cap, c.ci);
        Tensor weight = placeholder("weight", FLOAT32, c.k, c.k, c.cap, c.cap, c.ci, c.co);
        Tensor out = CapsuleConv.conv2dCapsuleNhwijc(
                data, weight, ConvParams.of(2, c.stride, c.pad).withDilation(c.dil));
        int oh = c.o(c.h), ow = c.o(c.w), cap = c.cap;
        assertThat(out.name()).isEqualTo("conv2d_capsule_nhwijc");
        assertThat(out.shape().toArray()).containsExactly(c.n, oh, ow, cap, cap, c.co);
        assertThat(ComputeDAG.of(out).flopCount())
                .isEqualTo(2L * c.n * oh * ow * cap * cap * c.co * c.k * c.k * cap * c.ci);
        ConvTesting.check(out, List.of(data, weight), 61, in -> {
            float[] x = in[0], w = in[1];
            float[] r = new float[c.n * oh * ow * cap * cap * c.co];
            int at = 0;
            for (int n = 0; n < c.n; n++)
                for (int y = 0; y < oh; y++)
                    for (int xx = 0; xx < ow; xx++)
                        for (int i = 0; i < cap; i++)
                            for (int j = 0; j < cap; j++)
                                for (int o = 0; o < c.co; o++) {
                                    double acc = 0;
                                    for (int ky = 0; ky < c.k; ky++)
                                        for (int kx = 0; kx < c.k; kx++) {
                                            int iy = y * c.stride - c.pad + ky * c.dil,
                                                    ix = xx * c.stride - c.pad + kx * c.dil;
                                            if (iy < 0 || iy >= c.h || ix < 0 || ix >= c.w) continue;
                                            for (int kk = 0; kk < cap; kk++)
                                                for (int rc = 0; rc < c.ci; rc++) {
                                                    acc += x[
                                                                    ((((n * c.h + iy) * c.w + ix) * cap + i) * cap + kk)
                                                                                    * c.ci
                                                                            + rc]
                                                            * w[
                                                                    ((((ky * c.k + kx) * cap + kk) * cap + j) * c.ci
                                                                                            + rc)
                                                                                    * c.co
                                                                            + o];
                                                }
                                        }
                                    r[at++] = (float) acc;
                                }
            return r;
        });
    }
}
