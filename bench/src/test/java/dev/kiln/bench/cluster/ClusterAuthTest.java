package dev.kiln.bench.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kiln.ir.KilnException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * A node without the cluster's key (here: a key store of its own, which the cluster does not trust) can neither join
 * nor have a worker measure for it; the same steps with the cluster's key store work.
 */
class ClusterAuthTest {

    @Test
    void aNodeWithoutTheClusterKeyCannotJoinOrSubmitWork() throws Exception {
        try (ClusterFixture fx = new ClusterFixture();
                ClusterNode tuner = fx.seedTuner()) {
            fx.workers.start(1, tuner.address(), 0, ClusterFixture.args("--simulate"), Duration.ofMinutes(2));
            try (ClusterJob job = new ClusterJob(tuner, "simulated", Duration.ofSeconds(30))) {
                job.awaitWorkers(1, Duration.ofSeconds(30));
                assertThat(job.run(List.of(WorkItem.simulated(0.01, 0.5)), Map.of())
                                .getFirst()
                                .ok())
                        .isTrue();
            }
            int members = tuner.members();

            var rogueKeys = ClusterKeys.generate(fx.dir.resolve("rogue.p12"), "rogue-secret", "rogue");
            ClusterSettings rogue = ClusterSettings.of(
                            "127.0.0.1", 0, List.of(tuner.address()), rogueKeys, "rogue-secret")
                    .withUnreachableAfter(ClusterFixture.UNREACHABLE);
            try (ClusterNode intruder = ClusterNode.start(rogue, List.of("tuner"));
                    ClusterJob job = new ClusterJob(intruder, "simulated", Duration.ofSeconds(4))) {
                assertThat(intruder.awaitUp(Duration.ofSeconds(6))).isFalse();
                assertThat(tuner.members()).isEqualTo(members);
                assertThatThrownBy(() -> job.run(List.of(WorkItem.simulated(0.01, 0.5)), Map.of()))
                        .isInstanceOf(KilnException.class)
                        .hasMessageContaining("no measurement worker");
            }
        }
    }
}
