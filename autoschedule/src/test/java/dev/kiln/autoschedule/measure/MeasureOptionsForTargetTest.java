package dev.kiln.autoschedule.measure;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kiln.target.CpuTarget;
import dev.kiln.target.Target;
import org.junit.jupiter.api.Test;

/** The JVM backend's target gets its own measurement defaults; other targets and chosen options are kept. */
class MeasureOptionsForTargetTest {
    private static final CpuTarget JVM = new CpuTarget("jvm", "hotspot", "", 2, 512, 64);

    @Test
    void theDefaultsWarmUpLongerOnTheJvmTarget() {
        MeasureOptions d = MeasureOptions.defaults();
        assertThat(d.forTarget(JVM)).isEqualTo(MeasureOptions.jvmDefaults());
        assertThat(MeasureOptions.jvmDefaults().warmupMs()).isGreaterThan(d.warmupMs());
        assertThat(MeasureOptions.jvmDefaults().timeoutSeconds()).isGreaterThan(d.timeoutSeconds());
        assertThat(d.forTarget(Target.cpu())).isEqualTo(d);
    }

    @Test
    void chosenOptionsAreKeptOnEveryTarget() {
        MeasureOptions mine = MeasureOptions.defaults().withRepeats(3);
        assertThat(mine.forTarget(JVM)).isEqualTo(mine);
        assertThat(mine.forTarget(Target.cpu())).isEqualTo(mine);
    }
}
