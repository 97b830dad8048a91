package dev.kiln.samples;

import static dev.kiln.ir.DType.FLOAT32;
import static org.assertj.core.api.Assertions.assertThat;

import dev.kiln.autoschedule.measure.LocalMeasurer;
import dev.kiln.autoschedule.measure.MeasureOptions;
import dev.kiln.autoschedule.network.CompiledNetwork;
import dev.kiln.autoschedule.network.Network;
import dev.kiln.autoschedule.network.NetworkTask;
import dev.kiln.autoschedule.network.NetworkTuneOptions;
import dev.kiln.autoschedule.scheduler.TaskResult;
import dev.kiln.graph.Graph;
import dev.kiln.graph.GraphBuilder;
import dev.kiln.graph.NodeRunner;
import dev.kiln.graph.ReferenceExecutor;
import dev.kiln.graph.Value;
import dev.kiln.graph.pass.ToBfloat16;
import dev.kiln.runtime.NDArray;
import dev.kiln.schedule.TensorIntrinsics;
import dev.kiln.schedule.TensorizeStep;
import dev.kiln.target.CpuTarget;
import dev.kiln.target.Target;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A small CNN converted by {@link ToBfloat16} and tuned as a network on this CPU (random sampling, in-process
 * measurement, 6 trials per task): its bfloat16 convs and dense layer run with their bias and ReLU fused and match the
 * reference run of the converted graph (interpreter; rtol and atol 1e-4: the same bfloat16 products, only the float32
 * sums' order differs), and the rebuilt network matches the tuned one. On a CPU with AVX-512 BF16 every bfloat16
 * layer's program is tensorized onto {@code vdpbf16ps} (or AMX's tiles); elsewhere they are ordinary loops.
 */
class Bfloat16NetworkTest {

    @Test
    void bfloat16LayersTuneRunAndRebuildFromTheLog(@TempDir Path dir) {
        GraphBuilder b = new GraphBuilder("bf16_cnn");
        Value x = b.input("x", FLOAT32, 1, 8, 8, 16);
        Value c1 = b.relu(
                "r1",
                b.biasAdd(
                        "b1",
                        b.conv2d("c1", x, b.weight("w1", 1, 0.2, 3, 3, 16, 32), "NHWC", 1, 1, 1),
                        b.weight("bias1", 2, 0.5, 32),
                        3));
        Value c2 = b.relu("r2", b.conv2d("c2", c1, b.weight("w2", 3, 0.2, 1, 1, 32, 32), "NHWC", 2, 0, 1));
        Value pooled = b.mean("gap", c2, false, 1, 2);
        Graph net =
                b.output(b.dense("fc", pooled, b.weight("wf", 4, 0.3, 16, 32))).build();
        ToBfloat16.Result r = ToBfloat16.apply(net);
        assertThat(r.converted()).containsExactly("c1", "c2", "fc");
        Graph bf = r.graph();
        CpuTarget target = Target.cpu();
        assertThat(Network.partition(bf, target).toString())
                .contains("conv2d_packed+bias_add+relu")
                .contains("matmul_packed");
        Path log = dir.resolve("bf16.jsonl");
        List<NetworkTask> tasks = Network.tasks(bf, target);
        try (LocalMeasurer m = LocalMeasurer.of(target, MeasureOptions.smoke());
                NDArray in = NDArray.random(FLOAT32, 5, 1, 8, 8, 16);
                NodeRunner ref = NodeRunner.interpreter()) {
            NDArray expected = ReferenceExecutor.run(bf, ref, in).getFirst();
            NetworkTuneOptions opts = RandomTuning.options(6 * tasks.size(), 3, 4, log, m);
            NDArray tuned;
            try (CompiledNetwork cn = Network.tune(bf, target, opts)) {
                // every task has a program (a lone cast of the input has one program, and its search ends there)
                assertThat(cn.tuning().orElseThrow().tasks())
                        .allSatisfy(t -> assertThat(t.best()).isPresent());
                tuned = cn.run(in);
                tuned.assertClose(expected, 1e-4, 1e-4);
                if (TensorIntrinsics.get(TensorIntrinsics.BF16_DOT).availableOn(target)) {
                    List<TaskResult> results = cn.tuning().orElseThrow().tasks();
                    int bf16Tasks = 0;
                    for (int i = 0; i < tasks.size(); i++) {
                        String key = tasks.get(i).description();
                        if (!key.contains("_packed")) continue;
                        bf16Tasks++;
                        assertThat(results.get(i)
                                        .best()
                                        .orElseThrow()
                                        .schedule()
                                        .steps())
                                .as(key + " runs on the bfloat16 dot-product instructions")
                                .anyMatch(s -> s instanceof TensorizeStep);
                    }
                    assertThat(bf16Tasks).isEqualTo(3);
                }
            }
            try (CompiledNetwork built = Network.build(bf, target, log);
                    NDArray y = built.run(in)) {
                y.assertClose(tuned, 1e-6, 1e-6);
            }
            tuned.close();
            expected.close();
        }
    }

    /**
     * The same with {@link ToBfloat16.Activations#BFLOAT16} on a residual block: the block input is written in
     * bfloat16 by the first conv's kernel (no cast kernel) and the residual conv's kernel widens it in its epilogue
     * (a tensorized conv with a widening cast, add, ReLU and rounding cast fused after it); the tuned network matches
     * the interpreter's run of the converted graph (rtol and atol 1e-4) and the rebuilt one matches the tuned one.
     */
    @Test
    void bfloat16ActivationsTuneAndRunWithTheirCastsFused(@TempDir Path dir) {
        GraphBuilder b = new GraphBuilder("bf16_residual");
        Value x = b.input("x", FLOAT32, 1, 8, 8, 16);
        Value y = b.relu("y", b.conv2d("c1", x, b.weight("w1", 1, 0.2, 3, 3, 16, 32), "NHWC", 1, 1, 1));
        Value z = b.relu("z", b.add("a", b.conv2d("c2", y, b.weight("w2", 3, 0.2, 1, 1, 32, 32), "NHWC", 1, 0, 1), y));
        Graph net = b.output(b.dense("fc", b.mean("gap", z, false, 1, 2), b.weight("wf", 4, 0.3, 16, 32)))
                .build();
        Graph bf = ToBfloat16.apply(net, ToBfloat16.Activations.BFLOAT16).graph();
        CpuTarget target = Target.cpu();
        assertThat(Network.partition(bf, target).toString())
                .contains("conv2d_packed+relu+cast ")
                .contains("conv2d_packed+cast+add+relu ");
        Path log = dir.resolve("bf16-act.jsonl");
        List<NetworkTask> tasks = Network.tasks(bf, target);
        try (LocalMeasurer m = LocalMeasurer.of(target, MeasureOptions.smoke());
                NDArray in = NDArray.random(FLOAT32, 5, 1, 8, 8, 16);
                NodeRunner ref = NodeRunner.interpreter()) {
            NDArray expected = ReferenceExecutor.run(bf, ref, in).getFirst();
            NetworkTuneOptions opts = RandomTuning.options(6 * tasks.size(), 3, 4, log, m);
            try (CompiledNetwork cn = Network.tune(bf, target, opts);
                    NDArray tuned = cn.run(in);
                    CompiledNetwork built = Network.build(bf, target, log);
                    NDArray y2 = built.run(in)) {
                tuned.assertClose(expected, 1e-4, 1e-4);
                y2.assertClose(tuned, 1e-6, 1e-6);
            }
            expected.close();
        }
    }
}
