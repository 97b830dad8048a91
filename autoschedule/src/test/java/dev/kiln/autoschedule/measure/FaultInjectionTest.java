package dev.kiln.autoschedule.measure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kiln.ir.KilnException;
import org.junit.jupiter.api.Test;

/**
 * The fault marks of {@link FaultInjection} in a JVM not started for them (this one): a marked request is refused with
 * a message naming the flag, an unmarked one passes; the crash and hang themselves are tested in a child JVM by the
 * bench module's ClusterFaultsTest.
 */
class FaultInjectionTest {
    @Test
    void aMarkedRequestIsRefusedWithoutTheFlagAndAnUnmarkedOnePasses() {
        assertThat(Boolean.getBoolean(FaultInjection.PROPERTY)).isFalse();
        RemoteMeasurement.Program plain = new RemoteMeasurement.Program("{\"op\":\"measure\",\"id\":0}");
        assertThat(FaultInjection.apply(WorkerProtocol.parse(plain.request()))).isNull();
        for (FaultInjection.Kind k : FaultInjection.Kind.values()) {
            RemoteMeasurement.Program marked = FaultInjection.mark(plain, k);
            assertThat(WorkerProtocol.parse(marked.request()).path("fault").asText())
                    .isEqualTo(k.name());
            assertThat(FaultInjection.apply(WorkerProtocol.parse(marked.request())))
                    .contains("not started for")
                    .contains(FaultInjection.CHILD_FLAG);
        }
    }

    @Test
    void kindsParseInAnyCaseAndAnUnknownOneIsNamed() {
        assertThat(FaultInjection.Kind.parse(" Crash")).isEqualTo(FaultInjection.Kind.CRASH);
        assertThat(FaultInjection.Kind.parse("HANG")).isEqualTo(FaultInjection.Kind.HANG);
        assertThatThrownBy(() -> FaultInjection.Kind.parse("melt"))
                .isInstanceOf(KilnException.class)
                .hasMessageContaining("'melt'");
    }
}
