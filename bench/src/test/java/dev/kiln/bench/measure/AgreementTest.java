package dev.kiln.bench.measure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import dev.kiln.ir.KilnException;
import org.junit.jupiter.api.Test;

/** The agreement measures of {@code ./kiln measure-bench} on synthetic runs, and its policies. */
class AgreementTest {

    @Test
    void identicalRunsAgreeFullyAndReversedOnesNotAtAll() {
        double[] a = {1, 2, 3, 4, 5, 6, 7, 8};
        double[] scaled = {2, 4, 6, 8, 10, 12, 14, 16};
        Agreement same = Agreement.of(new double[][] {a, a});
        assertThat(same.pairwise()).isEqualTo(1);
        assertThat(same.spearman()).isCloseTo(1, within(1e-12));
        assertThat(same.top5()).isEqualTo(1);
        assertThat(same.spreadP50()).isZero();
        Agreement twice = Agreement.of(new double[][] {a, scaled});
        assertThat(twice.pairwise()).isEqualTo(1);
        assertThat(twice.spreadP50()).isCloseTo(1, within(1e-12)); // every program 2x slower in the second run
        double[] reversed = {8, 7, 6, 5, 4, 3, 2, 1};
        Agreement rev = Agreement.of(new double[][] {a, reversed});
        assertThat(rev.pairwise()).isZero();
        assertThat(rev.spearman()).isCloseTo(-1, within(1e-12));
    }

    @Test
    void oneSwappedPairAndThreeRuns() {
        double[] a = {1, 2, 3, 4};
        double[] b = {2, 1, 3, 4}; // 1 of 6 pairs swapped
        Agreement ab = Agreement.of(new double[][] {a, b});
        assertThat(ab.pairwise()).isCloseTo(5 / 6.0, within(1e-12));
        assertThat(ab.spreadP90()).isCloseTo(1, within(1e-12)); // programs 0 and 1: 1 vs 2
        Agreement three = Agreement.of(new double[][] {a, a, b}); // pairs of runs: 1, 5/6, 5/6
        assertThat(three.pairwise()).isCloseTo((1 + 5 / 6.0 + 5 / 6.0) / 3, within(1e-12));
        assertThat(Agreement.ranks(new double[] {3, 1, 3, 2})).containsExactly(3.5, 1, 3.5, 2);
        assertThat(Agreement.percentile(new double[] {4, 1, 3, 2}, 0.5)).isEqualTo(2);
        assertThatThrownBy(() -> Agreement.of(new double[][] {a}))
                .isInstanceOf(KilnException.class)
                .hasMessageContaining("2 runs");
        assertThatThrownBy(() -> Agreement.of(new double[][] {a, {1, 2}})).isInstanceOf(KilnException.class);
    }

    @Test
    void policiesAreNamedAndUnknownOnesRefused() {
        assertThat(MeasurePolicy.list("legacy, warmup,default,flush,long", 20))
                .extracting(MeasurePolicy::name)
                .containsExactly("legacy", "warmup", "default", "flush", "long");
        MeasurePolicy legacy = MeasurePolicy.of("legacy", 20);
        assertThat(legacy.options().warmupMs()).isZero();
        assertThat(legacy.options().minRepeatMs()).isEqualTo(10);
        MeasurePolicy warmup = MeasurePolicy.of("warmup", 20);
        assertThat(warmup.options()).isEqualTo(legacy.options().withWarmupMs(100));
        MeasurePolicy d = MeasurePolicy.of("default", 20);
        assertThat(d.options().warmupMs()).isEqualTo(100);
        assertThat(d.options().minRepeatMs()).isZero();
        assertThat(d.options().remeasures()).isFalse();
        assertThat(MeasurePolicy.of("flush", 20).options().flushCache()).isTrue();
        assertThat(MeasurePolicy.of("long", 20).options().repeats()).isEqualTo(20);
        assertThat(legacy.describe()).contains("legacy").contains("5 repeats");
        assertThatThrownBy(() -> MeasurePolicy.of("short", 20))
                .isInstanceOf(KilnException.class)
                .hasMessageContaining("'short'");
    }
}
