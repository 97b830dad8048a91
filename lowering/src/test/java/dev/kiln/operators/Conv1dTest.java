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

/** conv1d NLC (weights [K, CI/groups, CO]) against plain loops, float32, rtol 1e-5, atol 1e-5. */
class Conv1dTest {

    record Case(String label, int n, int l, int ci, int co, int k, int stride, int pad, int dil, int groups) {
        int ol() {
            return (l + 2 * pad - dil * (k - 1) - 1) / stride + 1;
        }

        @Override
        public String toString() {
            return label;
        }
    }

    static Stream<Case> cases() {
        return Stream.of(
                new Case("C1D #1 reduced (1,256,64,128,3,2,1) -> (1,17,6,8,3,2,1)", 1, 17, 6, 8, 3, 2, 1, 1, 1),
                new Case("C1D #2 reduced (1,128,128,256,1,2,0) -> (1,9,4,6,1,2,0)", 1, 9, 4, 6, 1, 2, 0, 1, 1),
                new Case("C1D #3 reduced, batch 2 (2,11,5,7,5,1,2)", 2, 11, 5, 7, 5, 1, 2, 1, 1),
                new Case("dilation 2, groups 2, pad 1", 1, 13, 4, 6, 3, 1, 1, 2, 2),
                new Case("groups 4, stride 2, dilation 2", 1, 15, 8, 4, 3, 2, 0, 2, 4));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void nlcMatchesLoops(Case c) {
        Tensor data = placeholder("data", FLOAT32, c.n, c.l, c.ci);
        Tensor weight = placeholder("weight", FLOAT32, c.k, c.ci / c.groups, c.co);
        Tensor out = Conv.conv1dNlc(
                data,
                weight,
                ConvParams.of(1, c.stride, c.pad).withDilation(c.dil).withGroups(c.groups));
        assertThat(out.name()).isEqualTo("conv1d_nlc");
        assertThat(out.shape().toArray()).containsExactly(c.n, c.ol(), c.co);
        assertThat(ComputeDAG.of(out).flopCount()).isEqualTo(2L * c.n * c.ol() * c.co * (c.ci / c.groups) * c.k);
        ConvTesting.check(out, List.of(data, weight), 21, in -> reference(c, in[0], in[1]));
    }

    private static float[] reference(Case c, float[] x, float[] w) {
        int ol = c.ol(), cig = c.ci / c.groups, cog = c.co / c.groups;
        float[] out = new float[c.n * ol * c.co];
        for (int n = 0; n < c.n; n++) {
            for (int p = 0; p < ol; p++) {
                for (int o = 0; o < c.co; o++) {
                    double acc = 0;
                    for (int t = 0; t < c.k; t++) {
                        int ip = p * c.stride - c.pad + t * c.dil;
                        if (ip < 0 || ip >= c.l) continue;
                        for (int i = 0; i < cig; i++) {
                            acc += x[(n * c.l + ip) * c.ci + (o / cog) * cig + i] * w[(t * cig + i) * c.co + o];
                        }
                    }
                    out[(n * ol + p) * c.co + o] = (float) acc;
                }
            }
        }
        return out;
    }
}
