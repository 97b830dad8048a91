package dev.kiln.autoschedule.measure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kiln.ir.KilnException;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** User-style timing on a fake clock: when it stops, what it reports, and its validation. */
class CallTimerTest {

    /** A call that takes 1 ms on the fake clock, except every fifth, which takes 3 ms. */
    private static Runnable call(AtomicLong clock, AtomicLong calls) {
        return () -> clock.addAndGet(calls.incrementAndGet() % 5 == 0 ? 3_000_000 : 1_000_000);
    }

    @Test
    void itWarmsUpThenCallsUntilBothTheCountAndTheTimeAreReached() {
        AtomicLong clock = new AtomicLong(), calls = new AtomicLong();
        CallTimer.Stats s =
                CallTimer.time(call(clock, calls), new CallTimer.Policy(0, 20, 0.1, 10_000, 10), clock::get);
        // 0.1 s of calls averaging 1.4 ms: about 72, more than the 20 asked
        assertThat(s.calls()).isBetween(65, 80);
        assertThat(s.median()).isEqualTo(1e-3);
        assertThat(s.min()).isEqualTo(1e-3);
        assertThat(s.max()).isEqualTo(3e-3);
        assertThat(s.p10()).isEqualTo(1e-3);
        assertThat(s.p90()).isEqualTo(3e-3);
        assertThat(s.describe())
                .contains("1.000 ms")
                .contains("p10-p90 1.000-3.000")
                .contains(s.calls() + " calls");

        AtomicLong c2 = new AtomicLong(), n2 = new AtomicLong();
        CallTimer.Stats few = CallTimer.time(call(c2, n2), new CallTimer.Policy(0, 20, 0, 10_000, 10), c2::get);
        assertThat(few.calls()).isEqualTo(20);
        AtomicLong c3 = new AtomicLong(), n3 = new AtomicLong();
        assertThat(CallTimer.time(call(c3, n3), new CallTimer.Policy(0, 5, 100, 12, 1000), c3::get)
                        .calls())
                .isEqualTo(12);
        AtomicLong c4 = new AtomicLong(), n4 = new AtomicLong();
        assertThat(CallTimer.time(call(c4, n4), new CallTimer.Policy(0, 1000, 0, 1000, 0.05), c4::get)
                        .calls())
                .as("maxSeconds cuts it short")
                .isBetween(33, 40);
    }

    @Test
    void theWarmupRunsFirstAndIsNotTimed() {
        AtomicLong clock = new AtomicLong(), calls = new AtomicLong();
        CallTimer.Stats s = CallTimer.time(call(clock, calls), new CallTimer.Policy(50, 10, 0, 10, 10), clock::get);
        assertThat(s.warmup().runs()).isPositive();
        assertThat(calls.get()).isEqualTo(s.warmup().runs() + 10);
        assertThat(s.calls()).isEqualTo(10);
    }

    @Test
    void quantilesAndValidation() {
        CallTimer.Stats s =
                new CallTimer.Stats(new double[] {5, 1, 4, 2, 3, 6, 7, 8, 9, 10}, new Warmup.Outcome(0, 0, false));
        assertThat(s.seconds()).startsWith(1, 2, 3);
        assertThat(s.median()).isEqualTo(5.5);
        assertThat(s.quantile(0.1)).isEqualTo(1);
        assertThat(s.quantile(0.9)).isEqualTo(9);
        assertThat(s.quantile(1)).isEqualTo(10);
        assertThatThrownBy(() -> s.quantile(1.5)).isInstanceOf(KilnException.class);
        assertThatThrownBy(() -> new CallTimer.Stats(new double[0], null)).isInstanceOf(KilnException.class);
        assertThatThrownBy(() -> new CallTimer.Policy(-1, 1, 0, 1, 1))
                .isInstanceOf(KilnException.class)
                .hasMessageContaining("warmupMs");
        assertThatThrownBy(() -> new CallTimer.Policy(0, 0, 0, 1, 1))
                .isInstanceOf(KilnException.class)
                .hasMessageContaining("minCalls");
        assertThatThrownBy(() -> new CallTimer.Policy(0, 1, Double.NaN, 1, 1))
                .isInstanceOf(KilnException.class)
                .hasMessageContaining("minSeconds");
        assertThatThrownBy(() -> new CallTimer.Policy(0, 5, 0, 4, 1))
                .isInstanceOf(KilnException.class)
                .hasMessageContaining("maxCalls");
        assertThatThrownBy(() -> new CallTimer.Policy(0, 1, 0, 1, 0))
                .isInstanceOf(KilnException.class)
                .hasMessageContaining("maxSeconds");
        assertThat(CallTimer.Policy.kernel().minCalls()).isEqualTo(20);
    }
}
