package dev.kiln.autoschedule.network;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kiln.autoschedule.measure.MeasureOptions;
import org.junit.jupiter.api.Test;

/**
 * What a network's tuning does unless told otherwise: programs timed on cold data (the cache flush, which
 * evicts every argument where the backend can), schedule transfer and the layout rewrite on; an operator's
 * tuning keeps warm loops.
 */
class NetworkTuneOptionsTest {
    @Test
    void networksTuneOnColdDataByDefault() {
        NetworkTuneOptions o = NetworkTuneOptions.defaults();
        assertThat(o.scheduler().measureOptions().flushCache()).isTrue();
        assertThat(o.scheduler().transfer()).isTrue();
        assertThat(o.layoutRewrite()).isTrue();
        assertThat(MeasureOptions.defaults().flushCache())
                .as("an operator's tuning")
                .isFalse();
    }

    @Test
    void warmLoopsAreOneCallAway() {
        NetworkTuneOptions o = NetworkTuneOptions.builder()
                .trials(10)
                .scheduler(b -> b.measureOptions(MeasureOptions.defaults()))
                .build();
        assertThat(o.scheduler().measureOptions().flushCache()).isFalse();
        assertThat(o.scheduler().trials()).isEqualTo(10);
    }
}
