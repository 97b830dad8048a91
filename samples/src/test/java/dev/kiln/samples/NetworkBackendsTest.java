package dev.kiln.samples;

import static dev.kiln.ir.DType.FLOAT32;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kiln.autoschedule.network.CompiledNetwork;
import dev.kiln.autoschedule.network.Network;
import dev.kiln.autoschedule.network.NetworkProfile;
import dev.kiln.graph.Graph;
import dev.kiln.graph.NodeRunner;
import dev.kiln.graph.ReferenceExecutor;
import dev.kiln.models.Models;
import dev.kiln.runtime.NDArray;
import dev.kiln.target.Target;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Whole networks compiled by the LLVM and the pure-JVM backends (default lowering of every fused
 * group) compute what the node-by-node reference run computes in the interpreter, within float32
 * tolerance rtol 1e-4, atol 1e-4 (batch norm folded into the weights reorders a few roundings).
 */
class NetworkBackendsTest {

    private static void check(Graph net, Target target, long seed) {
        check(net, target, seed, false);
    }

    private static void check(Graph net, Target target, long seed, boolean profile) {
        try (CompiledNetwork cn = Network.buildUntuned(net, target);
                NodeRunner r = NodeRunner.interpreter()) {
            NDArray[] ins = net.inputs().stream()
                    .map(v -> NDArray.random(FLOAT32, seed, v.dims()))
                    .toArray(NDArray[]::new);
            List<NDArray> expected = ReferenceExecutor.run(net, r, ins);
            try (NDArray y = cn.run(ins)) {
                y.assertClose(expected.getFirst(), 1e-4, 1e-4);
            }
            if (profile) { // timed as a user runs it, with the spread of the runs
                NetworkProfile p = cn.profile(1, 9, ins);
                assertThat(p.calls()).hasSize(cn.kernelCalls());
                assertThat(p.p10Seconds()).isPositive().isLessThanOrEqualTo(p.seconds());
                assertThat(p.p90Seconds()).isGreaterThanOrEqualTo(p.seconds());
                assertThat(p.table(3)).contains("p10-p90");
                assertThatThrownBy(() -> cn.profile(-1, 3, ins)).hasMessageContaining("warmup");
            }
            expected.forEach(NDArray::close);
            for (NDArray a : ins) a.close();
        }
    }

    @Test
    void smallResnetOnLlvmAndJvm() {
        Graph net = Models.resnet18(1, 64, 8, 10, 4);
        check(net, Target.cpu(), 1, true);
        check(net, Target.jvm(), 2);
    }

    @Test
    void bertLayerOnLlvmAndJvm() {
        Graph net = Models.bertLayer(32, 64, 4, 128, 6);
        check(net, Target.cpu(), 3);
        check(net, Target.jvm(), 4);
    }

    @Test
    void smallMobilenetOnLlvm() {
        check(Models.mobilenetV2(1, 32, 8), Target.cpu(), 5);
    }
}
