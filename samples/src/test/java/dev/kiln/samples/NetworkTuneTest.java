package dev.kiln.samples;

import static dev.kiln.ir.DType.FLOAT32;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kiln.autoschedule.measure.LocalMeasurer;
import dev.kiln.autoschedule.measure.MeasureOptions;
import dev.kiln.autoschedule.network.CompiledNetwork;
import dev.kiln.autoschedule.network.Network;
import dev.kiln.autoschedule.network.NetworkTuneOptions;
import dev.kiln.autoschedule.scheduler.SchedulerResult;
import dev.kiln.graph.Graph;
import dev.kiln.graph.NodeRunner;
import dev.kiln.graph.ReferenceExecutor;
import dev.kiln.ir.KilnException;
import dev.kiln.models.Models;
import dev.kiln.runtime.NDArray;
import dev.kiln.target.CpuTarget;
import dev.kiln.target.Target;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A small ResNet-18 tuned end to end on this CPU through the LLVM backend (task scheduler, random
 * sampling per task for speed, in-process measurement): the compiled network matches the
 * reference run (rtol 1e-4, atol 1e-4, float32 with FMA contraction and folded batch norm), a
 * second tune on the same log measures nothing, and {@link Network#build} from the log gives the
 * same numbers without searching (to 1e-6: each task's weight layout is chosen by timing at build).
 */
class NetworkTuneTest {

    @Test
    void smallResnetTunesResumesAndRebuildsFromTheLog(@TempDir Path dir) {
        Graph net = Models.resnet18(1, 64, 8, 10, 12);
        CpuTarget target = Target.cpu();
        Path log = dir.resolve("net.jsonl");
        MeasureOptions fast = MeasureOptions.smoke();
        int tasks = Network.tasks(net, target).size();
        try (LocalMeasurer m = LocalMeasurer.of(target, fast);
                NDArray x = NDArray.random(FLOAT32, 5, 1, 64, 64, 3);
                NodeRunner ref = NodeRunner.interpreter()) {
            NDArray expected = ReferenceExecutor.run(net, ref, x).getFirst();
            NetworkTuneOptions opts = RandomTuning.options(4 * tasks, 2, 3, log, m);
            NDArray tuned;
            try (CompiledNetwork cn = Network.tune(net, target, opts)) {
                SchedulerResult r = cn.tuning().orElseThrow();
                assertThat(r.newTrials()).isEqualTo(4 * tasks);
                assertThat(r.deadTasks()).isEmpty();
                assertThat(r.history()).isNotEmpty();
                tuned = cn.run(x);
                tuned.assertClose(expected, 1e-4, 1e-4);
                // the conv tasks were tuned, measured and built with their weights packed for their tiles
                assertThat(cn.tasks())
                        .anySatisfy(t -> assertThat(t.task().layoutFree()).isNotEmpty());
                assertThat(cn.notes()).anySatisfy(n -> assertThat(n).contains("weights packed"));
            }
            try (CompiledNetwork again = Network.tune(net, target, opts)) {
                assertThat(again.tuning().orElseThrow().newTrials()).isZero();
            }
            try (CompiledNetwork built = Network.build(net, target, log);
                    NDArray y = built.run(x)) {
                y.assertClose(tuned, 1e-6, 1e-6); // the same programs, the same packed weights
            }
            try (CompiledNetwork plain = Network.buildWithoutPacking(net, target, log);
                    NDArray y = plain.run(x)) {
                y.assertClose(expected, 1e-4, 1e-4);
            }
            // a log tuned with the layout rewrite has no records under the plain tasks' keys
            assertThatThrownBy(() -> Network.build(net, target, log, false))
                    .isInstanceOf(KilnException.class)
                    .hasMessageContaining("build(graph, target, log, false)");
            tuned.close();
            expected.close();
        }
    }
}
