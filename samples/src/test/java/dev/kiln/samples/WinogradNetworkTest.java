package dev.kiln.samples;

import static dev.kiln.ir.DType.FLOAT32;
import static org.assertj.core.api.Assertions.assertThat;

import dev.kiln.autoschedule.measure.LocalMeasurer;
import dev.kiln.autoschedule.measure.MeasureOptions;
import dev.kiln.autoschedule.network.CompiledNetwork;
import dev.kiln.autoschedule.network.Network;
import dev.kiln.autoschedule.network.NetworkTuneOptions;
import dev.kiln.graph.Graph;
import dev.kiln.graph.GraphBuilder;
import dev.kiln.graph.NodeRunner;
import dev.kiln.graph.ReferenceExecutor;
import dev.kiln.graph.Value;
import dev.kiln.runtime.NDArray;
import dev.kiln.target.CpuTarget;
import dev.kiln.target.Target;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Two 3x3 convolutions tuned as a network on this CPU through the LLVM backend (random sampling, in-process
 * measurement, 6 trials per task): one by F(4x4, 3x3) (96 channels), one by F(2x2, 3x3) (96 -> 32), with biases and a
 * ReLU fused. The tuned and the rebuilt network match the reference run of the graph as written, with direct
 * convolutions (interpreter; rtol and atol 1e-4 on outputs of order 1: the transforms' rounding is about 1e-6 of
 * that), and the transformed weights are packed for the tuned tiles like any constant weight.
 */
class WinogradNetworkTest {

    @Test
    void winogradConvsTuneRunAndRebuildFromTheLog(@TempDir Path dir) {
        GraphBuilder b = new GraphBuilder("wino");
        Value x = b.input("x", FLOAT32, 1, 10, 9, 96);
        Value c1 = b.relu(
                "r1",
                b.biasAdd(
                        "b1",
                        b.conv2d("c1", x, b.weight("w1", 1, 0.05, 3, 3, 96, 96), "NHWC", 1, 1, 1),
                        b.weight("bias1", 2, 0.5, 96),
                        3));
        Value c2 = b.conv2d("c2", c1, b.weight("w2", 3, 0.05, 3, 3, 96, 32), "NHWC", 1, 1, 1);
        Graph net = b.output(c2).build();
        CpuTarget target = Target.cpu();
        assertThat(Network.winograd(target)).isTrue();
        assertThat(Network.partition(net, target).toString())
                .contains("conv2d_winograd+bias_add+relu")
                .contains("winograd4")
                .contains("winograd2");
        Path log = dir.resolve("wino.jsonl");
        MeasureOptions fast = MeasureOptions.smoke();
        int tasks = Network.tasks(net, target).size();
        assertThat(tasks).isEqualTo(2);
        try (LocalMeasurer m = LocalMeasurer.of(target, fast);
                NDArray in = NDArray.random(FLOAT32, 5, 1, 10, 9, 96);
                NodeRunner ref = NodeRunner.interpreter()) {
            NDArray expected = ReferenceExecutor.run(net, ref, in).getFirst();
            NetworkTuneOptions opts = RandomTuning.options(6 * tasks, 3, 4, log, m);
            NDArray tuned;
            try (CompiledNetwork cn = Network.tune(net, target, opts)) {
                assertThat(cn.tuning().orElseThrow().deadTasks()).isEmpty();
                tuned = cn.run(in);
                tuned.assertClose(expected, 1e-4, 1e-4);
                assertThat(cn.tasks())
                        .allSatisfy(t -> assertThat(t.task().layoutFree()).isNotEmpty());
            }
            try (CompiledNetwork built = Network.build(net, target, log);
                    NDArray y = built.run(in)) {
                y.assertClose(tuned, 1e-6, 1e-6);
            }
            tuned.close();
            expected.close();
        }
    }
}
