package dev.kiln.autoschedule.feature;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import dev.kiln.autoschedule.Candidate;
import dev.kiln.autoschedule.SearchTask;
import dev.kiln.autoschedule.Workloads;
import dev.kiln.autoschedule.search.TargetRules;
import dev.kiln.ir.Var;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Features of sampled programs: what every schedule of a computation must agree on. */
class SampledFeaturesTest {

    static double unlog(float v) {
        return Math.pow(2, v) - 1;
    }

    /**
     * However a matmul is tiled, parallelised, unrolled or factored, its statements do N*M*K
     * multiply-adds in all, and the output statement writes N*M floats once. A register tile with a
     * tail (a split that covers more than its loop, the rest guarded) has its arithmetic counted as
     * Ansor counts it, guards ignored: the work of the rows its splits cover; its unique bytes are
     * those of the rows that exist.
     */
    @ParameterizedTest
    @CsvSource({"24, 20, 18", "17, 12, 30", "64, 8, 9"})
    void matmulWorkIsScheduleInvariant(int n, int m, int k) {
        SearchTask task = Workloads.task(Workloads.matmul(n, m, k));
        List<Candidate> cs = TargetRules.cpu()
                .population(task, TargetRules.cpu().sketches(task))
                .sample(25, new SplittableRandom(n * 31L + m))
                .candidates();
        assertThat(cs).hasSizeGreaterThan(5);
        FeatureExtractor fx = FeatureExtractor.of(task);
        int mad = FeatureLayout.names().indexOf("float_mad");
        for (Candidate c : cs) {
            ProgramFeatures pf = fx.extract(c);
            assertThat(pf.isEmpty()).as(c.key()).isFalse();
            double total = 0;
            for (int r = 0; r < pf.rows(); r++) total += unlog(pf.get(r, mad));
            double rows = coveredRows(c, n);
            assertThat(total).as(c.key()).isCloseTo(rows * m * k, within(1e-3 * n * m * k));
            float[] out = pf.row("matmul");
            int w = writtenBlock(out);
            assertThat(unlog(out[w + FeatureLayout.B_UNIQUE_BYTES]))
                    .as(c.key())
                    .isCloseTo(4.0 * n * m, within(1e-3 * n * m)); // the rows that exist, tail or not
            assertThat(fx.extract(c)).isEqualTo(pf); // deterministic
        }
    }

    /** The rows of the matmul's first split of i (with a tail: ceil(n / inner) * inner), or n. */
    static double coveredRows(Candidate c, int n) {
        for (dev.kiln.schedule.Step st : c.schedule().steps()) {
            if (st instanceof dev.kiln.schedule.SplitStep sp
                    && sp.extent() != null
                    && sp.extent() == n
                    && sp.iterId() == 0) {
                int inner = sp.lengths().getLast();
                return n % inner == 0 ? n : (double) ((n + inner - 1) / inner) * inner;
            }
        }
        return n;
    }

    /** The buffer block whose access type is write or read-write. */
    static int writtenBlock(float[] row) {
        for (int b = 0; b < FeatureLayout.MAX_BUFFERS; b++) {
            int o = FeatureLayout.buffer(b);
            if (row[o + 1] == 1f || row[o + 2] == 1f) return o;
        }
        throw new AssertionError("no written buffer");
    }

    @Test
    void layoutNamesAreUniqueAndComplete() {
        assertThat(FeatureLayout.names()).hasSize(FeatureLayout.LENGTH).doesNotHaveDuplicates();
        assertThat(FeatureLayout.name(FeatureLayout.CURVE)).isEqualTo("arith_intensity_curve_0");
        assertThat(FeatureLayout.name(FeatureLayout.OUTER + 2)).isEqualTo("auto_unroll_max_step");
        assertThat(FeatureLayout.name(FeatureLayout.buffer(4) + FeatureLayout.B_STRIDE))
                .isEqualTo("B4.stride");
        assertThat(FeatureLayout.log2p(-3)).isEqualTo(-2f);
    }

    /** Ranges of index forms with divisions and remainders, loops outside a level fixed at their start. */
    @Test
    void affineRanges() {
        Var f = new Var("f"), i = new Var("i");
        var e = f.floordiv(4).mul(32).add(i.floormod(8)).add(f.floormod(4).mul(2));
        Affine a = Affine.of(e, null);
        long[] out = new long[2];
        // f in 0..15, i in 0..9
        a.range(
                (v, o) -> {
                    o[0] = 0;
                    o[1] = v == f ? 15 : 9;
                },
                out);
        assertThat(out).containsExactly(0, 3 * 32 + 7 + 6);
        // f fixed at 5: floordiv = 1, floormod = 1; i in 0..5 -> i mod 8 in 0..5
        a.range(
                (v, o) -> {
                    o[0] = v == f ? 5 : 0;
                    o[1] = v == f ? 5 : 5;
                },
                out);
        assertThat(out).containsExactly(32 + 2, 32 + 2 + 5);
        assertThat(a.uses(i)).isTrue();
        assertThat(a.coefficient(f)).isCloseTo(32.0 / 4 + 2, within(1e-9));
        assertThat(Affine.of(i.mul(3).sub(i.mul(3)).add(7), null).isConstant()).isTrue();
    }
}
