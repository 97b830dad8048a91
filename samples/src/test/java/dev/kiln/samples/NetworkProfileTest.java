package dev.kiln.samples;

import static dev.kiln.ir.DType.FLOAT32;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import dev.kiln.autoschedule.measure.LocalMeasurer;
import dev.kiln.autoschedule.measure.MeasureOptions;
import dev.kiln.autoschedule.network.CompiledNetwork;
import dev.kiln.autoschedule.network.HoldComparison;
import dev.kiln.autoschedule.network.Network;
import dev.kiln.autoschedule.network.NetworkProfile;
import dev.kiln.autoschedule.network.NetworkTask;
import dev.kiln.autoschedule.scheduler.TaskResult;
import dev.kiln.autoschedule.tune.AutoSchedule;
import dev.kiln.graph.Graph;
import dev.kiln.models.Models;
import dev.kiln.runtime.NDArray;
import dev.kiln.target.CpuTarget;
import dev.kiln.target.Target;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The network profile's diagnosis on the LLVM backend: each kernel's tuned time (from the search,
 * then from the log by {@link Network#build}) next to its time in the network, sorted by time lost;
 * the thread pool's sleeps; and the same-process A/B of holding the pool's threads awake, whose two
 * kinds of run give the same numbers.
 */
class NetworkProfileTest {

    @Test
    void profileSetsEachKernelBesideItsTunedTime(@TempDir Path dir) {
        CpuTarget target = Target.cpu();
        Graph g = Models.bertLayer(8, 16, 2, 32, 6); // 11 small tasks: one trial each
        Path log = dir.resolve("bert.jsonl");
        MeasureOptions fast = MeasureOptions.smoke();
        NDArray x = NDArray.random(FLOAT32, 3, g.inputs().getFirst().dims());
        double[] fromSearch;
        try (LocalMeasurer m = LocalMeasurer.of(target, fast)) {
            int tasks = Network.tasks(g, target).size();
            try (CompiledNetwork tuned = Network.tune(g, target, RandomTuning.options(tasks, 1, 2, log, m))) {
                List<TaskResult> results = tuned.tuning().orElseThrow().tasks();
                fromSearch = new double[tasks];
                for (NetworkTask t : tuned.tasks()) {
                    double best = results.get(t.id()).best().orElseThrow().seconds();
                    assertThat(tuned.tunedSeconds(t)).isEqualTo(best).isPositive();
                    fromSearch[t.id()] = best;
                }
            }
        }
        try (CompiledNetwork cn = Network.build(g, target, log);
                NDArray held = cn.run(x)) {
            for (NetworkTask t : cn.tasks()) { // the log's cost of the program the build took
                assertThat(cn.tunedSeconds(t))
                        .isCloseTo(AutoSchedule.bestProgram(t.task(), log).seconds(), within(1e-15))
                        .isCloseTo(fromSearch[t.id()], within(1e-9 * fromSearch[t.id()]))
                        .isPositive();
            }
            NetworkProfile p = cn.profile(1, 5, x);
            assertThat(p.calls()).hasSize(cn.kernelCalls());
            for (NetworkProfile.Entry e : p.calls()) {
                NetworkTask t = cn.tasks().get(e.task());
                assertThat(e.tunedSeconds()).isEqualTo(cn.tunedSeconds(t));
                assertThat(e.minSeconds()).isPositive().isLessThanOrEqualTo(e.seconds());
                assertThat(e.againSeconds()).isPositive();
                assertThat(e.ratio()).isCloseTo(e.seconds() / e.tunedSeconds(), within(1e-12));
            }
            List<NetworkProfile.Entry> sorted = p.byLostTime();
            for (int i = 1; i < sorted.size(); i++) {
                assertThat(sorted.get(i).lostSeconds())
                        .isLessThanOrEqualTo(sorted.get(i - 1).lostSeconds());
            }
            assertThat(p.tunedSeconds())
                    .isCloseTo(
                            p.calls().stream()
                                    .mapToDouble(NetworkProfile.Entry::tunedSeconds)
                                    .sum(),
                            within(1e-12));
            assertThat(p.workersHeld()).isTrue();
            assertThat(p.sleepsPerRun())
                    .as("the native pool counts its sleeps")
                    .isNotNaN()
                    .isNotNegative();
            String table = p.degradation(4);
            assertThat(table)
                    .contains("tuned ms", "lost ms", "again at once", "thread sleeps per run")
                    .contains(sorted.getFirst().description());
            assertThat(table.lines().count()).isEqualTo(1 + 4 + 3);

            HoldComparison ab = cn.compareHold(1, 3, x);
            assertThat(ab.held().calls()).isEqualTo(3);
            assertThat(ab.unheld().calls()).isEqualTo(3);
            assertThat(cn.holdWorkers()).as("left as it was").isTrue();
            assertThat(ab.describe()).contains("threads held", "threads not held", "sleeps per run");
            cn.holdWorkers(false);
            try (NDArray notHeld = cn.run(x)) {
                notHeld.assertClose(held, 0, 0);
            }
        } finally {
            x.close();
        }
    }

    @Test
    void anUntunedNetworkHasNoTunedTimes() {
        Graph g = Models.bertLayer(8, 16, 2, 32, 7);
        try (CompiledNetwork cn = Network.buildUntuned(g, Target.cpu());
                NDArray x = NDArray.random(FLOAT32, 4, g.inputs().getFirst().dims())) {
            NetworkProfile p = cn.profile(0, 1, x);
            assertThat(p.calls()).allSatisfy(e -> assertThat(e.tunedSeconds()).isNaN());
            assertThat(p.tunedSeconds()).isNaN();
            assertThat(p.degradation(3)).contains("tuned NaN ms").doesNotContain("against the tuned times");
        }
    }
}
