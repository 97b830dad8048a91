package dev.kiln.operators;

import static dev.kiln.ir.DType.FLOAT32;
import static dev.kiln.te.Te.placeholder;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kiln.ir.KilnException;
import dev.kiln.nn.Conv;
import dev.kiln.nn.ConvParams;
import dev.kiln.nn.Winograd;
import dev.kiln.runtime.NDArray;
import dev.kiln.te.ComputeOp;
import dev.kiln.te.Tensor;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Winograd F(m x m, 3 x 3) NHWC convolutions against the direct convolution, both run by the interpreter on seeded
 * random data in [-1, 1): whole and ragged tiles, padding on some sides or none, batch 2, the weight transformed as a
 * stage and in Java. Tolerance: float32 rounding of the transforms, 2e-5 relative to the output's largest value for
 * m = 2, 1e-4 for m = 4 (its transforms scale terms by up to 25 and its weight transform by fractions of 1/24).
 */
class WinogradTest {

    @ParameterizedTest(name = "m={0} n={1} {2}x{3} {4}->{5} pad {6},{7},{8},{9}")
    @CsvSource({
        "2, 1, 8, 8, 3, 5, 1, 1, 1, 1",
        "2, 2, 7, 5, 4, 6, 1, 1, 1, 1",
        "2, 1, 9, 6, 2, 3, 0, 0, 0, 0",
        "4, 1, 8, 8, 3, 5, 1, 1, 1, 1",
        "4, 2, 7, 5, 4, 6, 1, 1, 1, 1",
        "4, 1, 11, 9, 3, 2, 1, 0, 0, 2",
        "4, 1, 6, 6, 16, 16, 1, 1, 1, 1"
    })
    void matchesTheDirectConvolution(int m, int n, int h, int w, int ci, int co, int pt, int pl, int pb, int pr) {
        ConvParams p = ConvParams.of(2, 1, 0).withPadding2d(pt, pb, pl, pr);
        Tensor data = placeholder("data", FLOAT32, n, h, w, ci);
        Tensor weight = placeholder("weight", FLOAT32, 3, 3, ci, co);
        Tensor direct = Conv.conv2dNhwc(data, weight, p);
        Tensor wino = Winograd.conv2dNhwc(data, weight, m, p);
        assertThat(wino.shape()).isEqualTo(direct.shape());
        List<NDArray> in = OpHarness.randomInputs(List.of(data, weight), 7L * m + h);
        try (NDArray want = OpHarness.run(direct, List.of(data, weight), in);
                NDArray got = OpHarness.run(wino, List.of(data, weight), in)) {
            assertClose(got.toFloatArray(), want.toFloatArray(), m == 2 ? 2e-5 : 1e-4);
            // the same with the weight transformed in Java, as a network's constant weight is
            Tensor u = placeholder("u", FLOAT32, m + 2, m + 2, ci, co);
            Tensor pre = Winograd.conv2dNhwcTransformed(data, u, m, p);
            float[] uj = Winograd.transformWeight(in.get(1).toFloatArray(), ci, co, m);
            try (NDArray ua = NDArray.fromFloats(uj, m + 2, m + 2, ci, co);
                    NDArray got2 = OpHarness.run(pre, List.of(data, u), List.of(in.get(0), ua))) {
                assertClose(got2.toFloatArray(), want.toFloatArray(), m == 2 ? 2e-5 : 1e-4);
            }
        } finally {
            in.forEach(NDArray::close);
        }
    }

    @ParameterizedTest(name = "m={0}")
    @ValueSource(ints = {2, 4})
    void theMatricesComputeTheOneDimensionalCorrelation(int m) {
        // y = A^T [(G g) . (B^T d)] must equal y[i] = sum_r d[i + r] g[r] for any d, g
        Winograd.Matrices mat = Winograd.matrices(m);
        int alpha = mat.alpha();
        java.util.Random rnd = new java.util.Random(m);
        for (int trial = 0; trial < 20; trial++) {
            double[] d = new double[alpha], g = new double[3];
            for (int i = 0; i < alpha; i++) d[i] = rnd.nextDouble() * 2 - 1;
            for (int i = 0; i < 3; i++) g[i] = rnd.nextDouble() * 2 - 1;
            double[] prod = new double[alpha];
            for (int e = 0; e < alpha; e++) {
                double gd = 0, bd = 0;
                for (int r = 0; r < 3; r++) gd += mat.g()[e][r] * g[r];
                for (int i = 0; i < alpha; i++) bd += mat.bt()[e][i] * d[i];
                prod[e] = gd * bd;
            }
            for (int i = 0; i < m; i++) {
                double y = 0, want = 0;
                for (int e = 0; e < alpha; e++) y += mat.at()[i][e] * prod[e];
                for (int r = 0; r < 3; r++) want += d[i + r] * g[r];
                assertThat(y).as("m=%d output %d", m, i).isCloseTo(want, org.assertj.core.data.Offset.offset(1e-12));
            }
        }
    }

    @ParameterizedTest(name = "m={0}")
    @ValueSource(ints = {2, 4})
    void theTransformStagesNameTheLoopsToUnroll(int m) {
        Tensor out = Winograd.conv2dNhwc(
                placeholder("data", FLOAT32, 1, 8, 8, 4),
                placeholder("weight", FLOAT32, 3, 3, 4, 4),
                m,
                ConvParams.of(2, 1, 1));
        var ops = dev.kiln.te.ComputeDAG.of(out).ops();
        for (var op : ops) {
            if (!(op instanceof ComputeOp c)) continue;
            List<String> want =
                    switch (c.tag()) {
                        case Winograd.DATA_PACK -> List.of("eps", "nu", "r_a", "r_b");
                        case Winograd.INVERSE -> List.of("vh", "vw", "r_a", "r_b");
                        default -> List.of();
                    };
            assertThat(Winograd.unrolledAxes(c)).as(c.name()).isEqualTo(want);
        }
        assertThat(ConvTesting.stages(out))
                .containsExactly("pad", "data_pack", "weight_transform", "bgemm", "inverse", "conv2d_winograd_nhwc");
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"stride", "tile", "weight", "groups"})
    void badArgumentsAreNamed(String what) {
        Tensor data = placeholder("data", FLOAT32, 1, 8, 8, 4);
        Tensor weight = placeholder("weight", FLOAT32, 3, 3, 4, 4);
        switch (what) {
            case "stride" ->
                assertThatThrownBy(() -> Winograd.conv2dNhwc(data, weight, 2, ConvParams.of(2, 2, 1)))
                        .isInstanceOf(KilnException.class)
                        .hasMessageContaining("stride");
            case "tile" ->
                assertThatThrownBy(() -> Winograd.conv2dNhwc(data, weight, 3, ConvParams.of(2, 1, 1)))
                        .isInstanceOf(KilnException.class)
                        .hasMessageContaining("m must be 2 or 4");
            case "weight" ->
                assertThatThrownBy(() -> Winograd.conv2dNhwcTransformed(
                                data, placeholder("u", FLOAT32, 4, 4, 3, 4), 2, ConvParams.of(2, 1, 1)))
                        .isInstanceOf(KilnException.class)
                        .hasMessageContaining("'u'");
            default ->
                assertThatThrownBy(() -> Winograd.conv2dNhwc(
                                data, weight, 2, ConvParams.of(2, 1, 1).withGroups(2)))
                        .isInstanceOf(KilnException.class)
                        .hasMessageContaining("one group");
        }
    }

    private static void assertClose(float[] got, float[] want, double rel) {
        assertThat(got).hasSameSizeAs(want);
        double scale = 0;
        for (float v : want) scale = Math.max(scale, Math.abs(v));
        assertThat(scale).isGreaterThan(0);
        for (int i = 0; i < got.length; i++) {
            assertThat((double) got[i])
                    .as("element %d", i)
                    .isCloseTo(want[i], org.assertj.core.data.Offset.offset(rel * scale));
        }
    }
}
