package dev.kiln.cuda;

import static dev.kiln.ir.DType.FLOAT32;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.kiln.autoschedule.network.CompiledNetwork;
import dev.kiln.autoschedule.network.Network;
import dev.kiln.autoschedule.network.NetworkTask;
import dev.kiln.autoschedule.network.NetworkTuneOptions;
import dev.kiln.autoschedule.scheduler.TaskStatus;
import dev.kiln.cuda.compile.Nvcc;
import dev.kiln.cuda.compile.Nvrtc;
import dev.kiln.graph.Graph;
import dev.kiln.graph.GraphBuilder;
import dev.kiln.graph.NodeRunner;
import dev.kiln.graph.ReferenceExecutor;
import dev.kiln.graph.Value;
import dev.kiln.runtime.NDArray;
import dev.kiln.target.CudaTarget;
import dev.kiln.target.Target;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A network tuned for {@code Target.cuda()}: every task searched with the GPU sketches by the task
 * scheduler, each program lowered for the H200, turned into CUDA C and checked in the interpreter
 * ({@link GpuTuneTest.InterpreterGpuMeasurer}, all a machine without a GPU can do), the best
 * programs compiled by NVRTC into CUDA kernels. With a driver, the compiled network also runs on
 * the device and matches the reference run (rtol 1e-4, atol 1e-4).
 */
class GpuNetworkTuneTest {

    @Test
    void anMlpWithSoftmaxTunesForCuda(@TempDir Path dir) throws Exception {
        assumeTrue(
                Nvrtc.availability().available() || Nvcc.find().isPresent(),
                "no CUDA compiler: " + Nvrtc.availability());
        GraphBuilder b = new GraphBuilder("mlp");
        Value x = b.input("x", FLOAT32, 8, 32);
        Value h = b.relu(
                "relu",
                b.biasAdd("b1", b.dense("fc1", x, b.weight("w1", 1, 0.3, 64, 32)), b.weight("c1", 2, 0.1, 64), -1));
        Value y = b.biasAdd("b2", b.dense("fc2", h, b.weight("w2", 3, 0.3, 16, 64)), b.weight("c2", 4, 0.1, 16), -1);
        Graph net = b.output(b.softmax("probs", y, -1)).build();
        CudaTarget target = Target.cuda();
        List<NetworkTask> tasks = Network.tasks(net, target);
        assertThat(tasks)
                .extracting(NetworkTask::description)
                .containsExactly("dense+bias_add+relu [8, 64]", "dense+bias_add [8, 16]", "softmax [8, 16]");
        GpuTuneTest.InterpreterGpuMeasurer m = new GpuTuneTest.InterpreterGpuMeasurer(target);
        Path log = dir.resolve("gpu-net.jsonl");
        NetworkTuneOptions opts = NetworkTuneOptions.builder()
                .trials(18)
                .measuresPerRound(3)
                .seed(2)
                .logFile(log)
                .measurer(m)
                .build();
        try (CompiledNetwork cn = Network.tune(net, target, opts)) {
            assertThat(cn.tuning().orElseThrow().tasks())
                    .allSatisfy(t -> assertThat(t.status()).isEqualTo(TaskStatus.ALIVE));
            assertThat(cn.kernelCalls()).isEqualTo(3);
            assertThat(Files.readAllLines(log)).hasSize(18).allMatch(l -> l.contains("cuda -arch=sm_90"));
            if (CudaDriver.status().available()) {
                try (NDArray in = NDArray.random(FLOAT32, 1, 8, 32);
                        NodeRunner r = NodeRunner.interpreter();
                        NDArray out = cn.run(in)) {
                    out.assertClose(ReferenceExecutor.run(net, r, in).getFirst(), 1e-4, 1e-4);
                }
            }
        }
    }
}
