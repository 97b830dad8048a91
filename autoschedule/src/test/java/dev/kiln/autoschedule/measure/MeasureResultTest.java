package dev.kiln.autoschedule.measure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import dev.kiln.ir.KilnException;
import org.junit.jupiter.api.Test;

/** {@link MeasureResult}'s statistics and invariants, {@link MeasureOptions}' validation. */
class MeasureResultTest {

    @Test
    void medianMeanAndSpeed() {
        MeasureResult odd = MeasureResult.ok(new double[] {3e-3, 1e-3, 2e-3}, 0.5, 1.0);
        assertThat(odd.median()).isEqualTo(2e-3);
        assertThat(odd.mean()).isCloseTo(2e-3, within(1e-15));
        assertThat(odd.cost()).isEqualTo(CostStatistic.DEFAULT.of(new double[] {3e-3, 1e-3, 2e-3}));
        assertThat(odd.gflops(4_000_000)).isCloseTo(4e6 / odd.cost() / 1e9, within(1e-9));
        assertThat(odd.cost(CostStatistic.MIN)).isEqualTo(1e-3);
        assertThat(odd.cost(CostStatistic.MEDIAN)).isEqualTo(2e-3);
        MeasureResult even = MeasureResult.ok(new double[] {4.0, 1.0, 3.0, 2.0}, 0, 0);
        assertThat(even.median()).isEqualTo(2.5);
        double[] costs = odd.costsSeconds();
        costs[0] = 99;
        assertThat(odd.costsSeconds()[0]).isEqualTo(3e-3);
        assertThat(odd.withWallSeconds(7).wallSeconds()).isEqualTo(7);
        assertThat(odd.withWallSeconds(7).median()).isEqualTo(2e-3);
    }

    @Test
    void failuresRankLast() {
        MeasureResult f = MeasureResult.failed(MeasureError.TIMEOUT, "too slow", 0.1, 3);
        assertThat(f.ok()).isFalse();
        assertThat(f.median()).isEqualTo(MeasureResult.FAILED_COST);
        assertThat(f.mean()).isEqualTo(MeasureResult.FAILED_COST);
        assertThat(f.cost()).isEqualTo(MeasureResult.FAILED_COST);
        assertThat(f.gflops(1_000)).isZero();
        assertThat(f.toString()).contains("TIMEOUT").contains("too slow");
        assertThat(MeasureError.WRONG_RESULT.ansorCode()).isEqualTo(5);
    }

    @Test
    void invariantsAreChecked() {
        assertThatThrownBy(() -> MeasureResult.ok(new double[0], 0, 0))
                .isInstanceOf(KilnException.class)
                .hasMessageContaining("at least one time");
        assertThatThrownBy(() -> new MeasureResult(new double[] {1}, MeasureError.CRASH, "x", 0, 0, 0))
                .isInstanceOf(KilnException.class)
                .hasMessageContaining("has no times");
        assertThatThrownBy(() -> MeasureResult.ok(new double[] {-1}, 0, 0)).isInstanceOf(KilnException.class);
        assertThatThrownBy(() -> MeasureResult.ok(new double[] {Double.NaN}, 0, 0))
                .isInstanceOf(KilnException.class);
        assertThatThrownBy(() -> MeasureResult.failed(MeasureError.NONE, "", 0, 0))
                .isInstanceOf(KilnException.class);
    }

    @Test
    void optionsAreValidated() {
        MeasureOptions d = MeasureOptions.defaults();
        assertThat(d.withRepeats(7)
                        .withNumber(3)
                        .withWarmup(0)
                        .withMinRepeatMs(0)
                        .withFlushCache(true)
                        .withTimeoutSeconds(1.5)
                        .withCheckCorrectness(false)
                        .withTolerances(1e-5, 0)
                        .withSeed(9)
                        .withWarmupMs(0)
                        .withRemeasure(0, 0))
                .isEqualTo(new MeasureOptions(7, 3, 0, 0, true, 1.5, false, 1e-5, 0, 9));
        assertThatThrownBy(() -> d.withRepeats(0))
                .isInstanceOf(KilnException.class)
                .hasMessageContaining("repeats");
        assertThatThrownBy(() -> d.withNumber(0))
                .isInstanceOf(KilnException.class)
                .hasMessageContaining("number");
        assertThatThrownBy(() -> d.withWarmup(-1))
                .isInstanceOf(KilnException.class)
                .hasMessageContaining("warmup");
        assertThatThrownBy(() -> d.withMinRepeatMs(Double.NaN)).isInstanceOf(KilnException.class);
        assertThatThrownBy(() -> d.withTimeoutSeconds(0))
                .isInstanceOf(KilnException.class)
                .hasMessageContaining("timeout");
        assertThatThrownBy(() -> d.withTolerances(-1, 0))
                .isInstanceOf(KilnException.class)
                .hasMessageContaining("tolerances");
    }
}
