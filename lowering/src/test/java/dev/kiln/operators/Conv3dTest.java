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

/** conv3d NDHWC (weights DHWIO) against plain loops, float32, rtol 1e-5, atol 1e-5. */
class Conv3dTest {

    record Case(
            String label, int n, int d, int h, int w, int ci, int co, int k, int stride, int pad, int dil, int groups) {
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
                new Case("odd 5x7x6, 3x3x3, pad 1", 1, 5, 7, 6, 3, 4, 3, 1, 1, 1, 1),
                new Case("stride 2, pad 1, batch 2", 2, 7, 6, 5, 2, 3, 3, 2, 1, 1, 1),
                new Case("dilation 2, no padding", 1, 7, 7, 7, 2, 2, 2, 1, 0, 2, 1),
                new Case("groups 2, pad 1", 1, 4, 5, 3, 4, 6, 3, 1, 1, 1, 2),
                new Case(
                        "C3D #1 reduced (1,16,224,224,3,64,7,2,3) -> (1,7,11,11,3,4,7,2,3)",
                        1,
                        7,
                        11,
                        11,
                        3,
                        4,
                        7,
                        2,
                        3,
                        1,
                        1));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void ndhwcMatchesLoops(Case c) {
        Tensor data = placeholder("data", FLOAT32, c.n, c.d, c.h, c.w, c.ci);
        Tensor weight = placeholder("weight", FLOAT32, c.k, c.k, c.k, c.ci / c.groups, c.co);
        ConvParams p = ConvParams.of(3, c.stride, c.pad).withDilation(c.dil).withGroups(c.groups);
        Tensor out = Conv.conv3dNdhwc(data, weight, p);
        assertThat(out.shape().toArray()).containsExactly(c.n, c.o(c.d), c.o(c.h), c.o(c.w), c.co);
        assertThat(ComputeDAG.of(out).flopCount())
                .isEqualTo(2L * c.n * c.o(c.d) * c.o(c.h) * c.o(c.w) * c.co * (c.ci / c.groups) * c.k * c.k * c.k);
        ConvTesting.check(out, List.of(data, weight), 31, in -> reference(c, in[0], in[1]));
    }

    private static float[] reference(Case c, float[] x, float[] w) {
        int od = c.o(c.d), oh = c.o(c.h), ow = c.o(c.w), cig = c.ci / c.groups, cog = c.co / c.groups, k = c.k;
        float[] out = new float[c.n * od * oh * ow * c.co];
        int at = 0;
        for (int n = 0; n < c.n; n++) {
            for (int z = 0; z < od; z++) {
                for (int y = 0; y < oh; y++) {
                    for (int xx = 0; xx < ow; xx++) {
                        for (int o = 0; o < c.co; o++) {
                            double acc = 0;
                            for (int kz = 0; kz < k; kz++) {
                                int iz = z * c.stride - c.pad + kz * c.dil;
                                for (int ky = 0; ky < k; ky++) {
                                    int iy = y * c.stride - c.pad + ky * c.dil;
                                    for (int kx = 0; kx < k; kx++) {
                                        int ix = xx * c.stride - c.pad + kx * c.dil;
                                        if (iz < 0 || iz >= c.d || iy < 0 || iy >= c.h || ix < 0 || ix >= c.w) continue;
                                        for (int i = 0; i < cig; i++) {
                                            int ch = (o / cog) * cig + i;
                                            acc += x[(((n * c.d + iz) * c.h + iy) * c.w + ix) * c.ci + ch]
                                                    * w[(((kz * k + ky) * k + kx) * cig + i) * c.co + o];
                                        }
                                    }
                                }
                            }
                            out[at++] = (float) acc;
                        }
                    }
                }
            }
        }
        return out;
    }
}
