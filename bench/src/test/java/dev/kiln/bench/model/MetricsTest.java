package dev.kiln.bench.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import java.util.Arrays;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** The cost-model quality measures, on hand-made cases and on fresh random data. */
class MetricsTest {
    @Test
    void handMadeCases() {
        double[] truth = {4, 3, 2, 1};
        // One swapped neighbour pair out of six pairs.
        assertThat(Metrics.pairwiseAccuracy(new double[] {4, 2, 3, 1}, truth)).isCloseTo(5.0 / 6, within(1e-12));
        // Top 2 by score are programs 0 and 2; the true top 2 are 0 and 1.
        assertThat(Metrics.recallAt(2, new double[] {9, 1, 8, 0}, truth)).isEqualTo(0.5);
        // Predicting the mean gives R^2 = 0; a perfect prediction 1.
        assertThat(Metrics.r2(new double[] {2.5, 2.5, 2.5, 2.5}, truth)).isCloseTo(0, within(1e-12));
        assertThat(Metrics.r2(truth, truth)).isEqualTo(1);
        // Ties in the truth are not pairs to order.
        assertThat(Metrics.pairwiseAccuracy(new double[] {1, 3, 2}, new double[] {5, 5, 6}))
                .isEqualTo(0.5);
    }

    @Test
    void randomData() {
        SplittableRandom r = new SplittableRandom(System.nanoTime());
        double[] truth = r.doubles(500).toArray();
        double[] reversed = Arrays.stream(truth).map(v -> -v).toArray();
        double[] noise = r.doubles(500).toArray();
        assertThat(Metrics.pairwiseAccuracy(truth, truth)).isEqualTo(1);
        assertThat(Metrics.pairwiseAccuracy(reversed, truth)).isZero();
        assertThat(Metrics.pairwiseAccuracy(noise, truth)).isBetween(0.4, 0.6);
        assertThat(Metrics.recallAt(30, truth, truth)).isEqualTo(1);
        assertThat(Metrics.recallAt(30, reversed, truth)).isZero();
        // A monotone transform keeps the order measures but not R^2.
        double[] squared = Arrays.stream(truth).map(v -> v * v).toArray();
        assertThat(Metrics.pairwiseAccuracy(squared, truth)).isEqualTo(1);
        assertThat(Metrics.r2(squared, truth)).isLessThan(1);
    }

    @Test
    void workloadSpecs() {
        assertThat(BenchWorkloads.of("gemm:64").dag().flopCount()).isEqualTo(2L * 64 * 64 * 64);
        assertThat(BenchWorkloads.of("c2d:1").name()).isEqualTo("C2D 56x56x64->64 1x1");
        assertThat(BenchWorkloads.of("dep:0").name()).isEqualTo("DEP 112x112x32 3x3");
        assertThat(BenchWorkloads.list("gemm:8, softmax:4x8")).hasSize(2);
        assertThatThrownBy(() -> BenchWorkloads.of("c2d:9"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("c2d:9")
                .hasMessageContaining("gemm:N");
    }
}
