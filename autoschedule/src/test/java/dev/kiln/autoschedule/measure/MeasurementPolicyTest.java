package dev.kiln.autoschedule.measure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import dev.kiln.ir.KilnException;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * Issue 13's measurement rules without timing anything: the new options and their validation,
 * their trip to the worker, the cost statistics on synthetic repeats, and the warm-up by time on
 * a fake kernel that advances a fake clock.
 */
class MeasurementPolicyTest {

    @Test
    void theNewOptionsAreValidatedAndNamed() {
        MeasureOptions d = MeasureOptions.defaults();
        assertThat(d.warmupMs()).isEqualTo(100);
        assertThat(d.repeats()).isEqualTo(10);
        assertThat(d.number()).isEqualTo(1);
        assertThat(d.minRepeatMs()).isZero();
        assertThat(d.remeasureTop()).isEqualTo(3);
        assertThat(d.remeasureRounds()).isEqualTo(2);
        assertThat(d.remeasures()).isTrue();
        assertThat(d.withRemeasure(0, 2).remeasures()).isFalse();
        assertThat(d.withRemeasure(3, 0).remeasures()).isFalse();
        assertThat(MeasureOptions.legacy().warmupMs()).isZero();
        assertThat(MeasureOptions.legacy().remeasures()).isFalse();
        assertThat(MeasureOptions.legacy()).isEqualTo(new MeasureOptions(5, 1, 1, 10, false, 20, true, 1e-3, 1e-3, 42));
        assertThatThrownBy(() -> d.withWarmupMs(-1))
                .isInstanceOf(KilnException.class)
                .hasMessageContaining("warmupMs");
        assertThatThrownBy(() -> d.withWarmupMs(Double.NaN))
                .isInstanceOf(KilnException.class)
                .hasMessageContaining("warmupMs");
        assertThatThrownBy(() -> d.withWarmupMs(Double.POSITIVE_INFINITY))
                .isInstanceOf(KilnException.class)
                .hasMessageContaining("warmupMs");
        assertThatThrownBy(() -> d.withRemeasure(-1, 2))
                .isInstanceOf(KilnException.class)
                .hasMessageContaining("remeasureTop");
        assertThatThrownBy(() -> d.withRemeasure(3, -2))
                .isInstanceOf(KilnException.class)
                .hasMessageContaining("remeasureRounds");
    }

    @Test
    void theWorkerGetsTheNewOptionsAndReadsAnOldRequestAsTheOldPolicy() {
        MeasureOptions o = MeasureOptions.defaults().withWarmupMs(37.5).withRemeasure(4, 1);
        assertThat(WorkerProtocol.options(WorkerProtocol.parse(WorkerProtocol.write(WorkerProtocol.options(o)))))
                .isEqualTo(o);
        var old = WorkerProtocol.options(MeasureOptions.legacy());
        old.remove("warmup_ms");
        old.remove("remeasure_top");
        old.remove("remeasure_rounds");
        assertThat(WorkerProtocol.options(old)).isEqualTo(MeasureOptions.legacy());
    }

    @Test
    void costStatisticsOnSyntheticRepeats() {
        double[] r = {5, 1, 4, 2, 3, 100}; // one slow outlier
        assertThat(CostStatistic.MIN.of(r)).isEqualTo(1);
        assertThat(CostStatistic.MEDIAN.of(r)).isEqualTo(3.5);
        assertThat(CostStatistic.MEAN.of(r)).isCloseTo(115 / 6.0, within(1e-12));
        // 6 repeats: one dropped at each end (a fifth, at least one), mean of 2, 3, 4, 5
        assertThat(CostStatistic.TRIMMED_MEAN.of(r)).isEqualTo(3.5);
        double[] ten = {1, 2, 3, 4, 5, 6, 7, 8, 9, 1000};
        assertThat(CostStatistic.TRIMMED_MEAN.of(ten)).isEqualTo((3 + 4 + 5 + 6 + 7 + 8) / 6.0);
        assertThat(CostStatistic.TRIMMED_MEAN.of(new double[] {2, 4})).isEqualTo(3);
        assertThat(CostStatistic.MEDIAN.of(new double[] {7})).isEqualTo(7);
        double[] copy = r.clone();
        for (CostStatistic s : CostStatistic.values()) s.of(r);
        assertThat(r).containsExactly(copy);
        assertThatThrownBy(() -> CostStatistic.MIN.of(new double[0]))
                .isInstanceOf(KilnException.class)
                .hasMessageContaining("MIN");
        assertThat(CostStatistic.parse("trimmed-mean")).isEqualTo(CostStatistic.TRIMMED_MEAN);
        assertThat(CostStatistic.parse(" Min ")).isEqualTo(CostStatistic.MIN);
        assertThatThrownBy(() -> CostStatistic.parse("p50"))
                .isInstanceOf(KilnException.class)
                .hasMessageContaining("'p50'");
    }

    @Test
    void theWarmupStopsOnceTheTimesSettle() {
        // A kernel whose runs take 200 us, falling by 40 us a run to 40 us (a clock ramping up), then steady.
        AtomicLong clock = new AtomicLong();
        AtomicLong runs = new AtomicLong();
        Runnable kernel = () -> {
            long n = runs.getAndIncrement();
            clock.addAndGet(Math.max(40_000, 200_000 - 40_000 * n));
        };
        Warmup.Outcome o = Warmup.run(kernel, 100, clock::get);
        assertThat(o.settled()).isTrue();
        assertThat(o.runs()).isEqualTo(runs.get());
        // slices of 10 ms: the first holds the ramp; the next three are steady, and it stops there
        assertThat(o.elapsedNs()).isBetween(30_000_000L, 45_000_000L);
        assertThat(o.elapsedNs()).isEqualTo(clock.get());
    }

    @Test
    void theWarmupStopsAtItsBudgetWhenTheTimesKeepMoving() {
        AtomicLong clock = new AtomicLong();
        AtomicLong runs = new AtomicLong();
        // every run 5% slower than the one before: never settles
        Runnable kernel = () -> clock.addAndGet((long) (10_000 * Math.pow(1.05, runs.getAndIncrement())));
        Warmup.Outcome o = Warmup.run(kernel, 20, clock::get);
        assertThat(o.settled()).isFalse();
        assertThat(o.elapsedNs()).isGreaterThanOrEqualTo(20_000_000L).isLessThan(25_000_000L);
    }

    @Test
    void aKernelSlowerThanTheBudgetRunsOnceAndAZeroBudgetNever() {
        AtomicLong clock = new AtomicLong();
        AtomicLong runs = new AtomicLong();
        Runnable slow = () -> {
            runs.incrementAndGet();
            clock.addAndGet(500_000_000L);
        };
        assertThat(Warmup.run(slow, 100, clock::get).runs()).isEqualTo(1);
        assertThat(Warmup.run(slow, 0, clock::get)).isEqualTo(new Warmup.Outcome(0, 0, false));
        assertThat(runs.get()).isEqualTo(1);
        assertThatThrownBy(() -> Warmup.run(slow, -1, clock::get))
                .isInstanceOf(KilnException.class)
                .hasMessageContaining("budgetMs");
        assertThat(Warmup.settled(new double[] {100, 101, 101.5})).isTrue();
        assertThat(Warmup.settled(new double[] {100, 101, 103})).isFalse();
    }
}
