package dev.kiln.samples;

import static dev.kiln.ir.DType.FLOAT32;
import static org.assertj.core.api.Assertions.assertThat;

import dev.kiln.autoschedule.log.LogRecord;
import dev.kiln.autoschedule.log.TuningLog;
import dev.kiln.autoschedule.measure.LocalMeasurer;
import dev.kiln.autoschedule.measure.MeasureOptions;
import dev.kiln.autoschedule.network.CompiledNetwork;
import dev.kiln.autoschedule.network.Network;
import dev.kiln.autoschedule.network.NetworkTask;
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
 * sums' order differs), and the rebuilt network matches the tuned one. On a CPU with AVX-512 BF16 the search runs
 * every bfloat16 layer on {@code vdpbf16ps} (or AMX's tiles); elsewhere they are ordinary loops.
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
        assertThat(tuneRunRebuild(bf, dir.resolve("bf16.jsonl"))).isEqualTo(bf16Dot() ? 3 : 0);
    }

    /**
     * The same with {@link ToBfloat16.Activations#BFLOAT16} on a residual block: the block input is written in
     * bfloat16 by the first conv's kernel (no cast kernel) and the residual conv's kernel widens it in its epilogue
     * (a tensorized conv with a widening cast, add, ReLU and rounding cast fused after it), the max pool before it and
     * the layer norm before the dense layer round their values in their own kernels; the tuned network matches
     * the interpreter's run of the converted graph (rtol and atol 1e-4) and the rebuilt one matches the tuned one.
     */
    @Test
    void bfloat16ActivationsTuneAndRunWithTheirCastsFused(@TempDir Path dir) {
        GraphBuilder b = new GraphBuilder("bf16_residual");
        Value x = b.input("x", FLOAT32, 1, 8, 8, 16);
        Value p = b.maxPool2d("pool", x, "NHWC", 3, 1, 1);
        Value y = b.relu("y", b.conv2d("c1", p, b.weight("w1", 1, 0.2, 3, 3, 16, 32), "NHWC", 1, 1, 1));
        Value z = b.relu("z", b.add("a", b.conv2d("c2", y, b.weight("w2", 3, 0.2, 1, 1, 32, 32), "NHWC", 1, 0, 1), y));
        Value ln = b.layerNorm(
                "ln",
                b.mean("gap", z, false, 1, 2),
                b.uniform("g", 5, 0.5, 1.5, 32),
                b.weight("be", 6, 0.1, 32),
                1,
                1e-5);
        Graph net = b.output(b.dense("fc", ln, b.weight("wf", 4, 0.3, 16, 32))).build();
        Graph bf = ToBfloat16.apply(net, ToBfloat16.Activations.BFLOAT16).graph();
        CpuTarget target = Target.cpu();
        assertThat(Network.partition(bf, target).toString())
                .contains("max_pool2d+cast ") // the pool and the layer norm write their values in bfloat16
                .contains("layer_norm+cast ")
                .contains("conv2d_packed+relu+cast ")
                .contains("conv2d_packed+cast+add+relu ");
        assertThat(tuneRunRebuild(bf, dir.resolve("bf16-act.jsonl"))).isEqualTo(bf16Dot() ? 3 : 0);
    }

    /**
     * A small BERT layer in bfloat16: its dense layers and both attention products (float32 sums of bfloat16
     * operands, the right one packed in the kernel by the task's {@code DotProductLayout}) tuned on this CPU, against
     * the interpreter's run of the converted graph; on a CPU with AVX-512 BF16 every one of those tasks has a
     * tensorized program.
     */
    @Test
    void attentionInBfloat16TunesOntoTheInstructions(@TempDir Path dir) {
        Graph bf = ToBfloat16.apply(dev.kiln.models.Models.bertLayer(16, 32, 2, 64, 5), ToBfloat16.Activations.BFLOAT16)
                .graph();
        assertThat(Network.partition(bf, Target.cpu()).toString()).contains("softmax+cast ");
        List<NetworkTask> products = Network.tasks(bf, Target.cpu()).stream()
                .filter(t -> t.description().startsWith("batch_matmul"))
                .toList();
        assertThat(products).hasSize(2);
        int checked = tuneRunRebuild(bf, dir.resolve("bert.jsonl"));
        if (bf16Dot()) assertThat(checked).isGreaterThan(products.size()); // the products and the dense layers
    }

    private static boolean bf16Dot() {
        return TensorIntrinsics.get(TensorIntrinsics.BF16_DOT).availableOn(Target.cpu());
    }

    /**
     * Tunes {@code bf} on this CPU (random sampling, 6 trials per task, in-process measurement), checks every task has
     * a program, the tuned network against the interpreter's run of {@code bf} (rtol and atol 1e-4) and the network
     * rebuilt from the log against the tuned one; on a CPU with AVX-512 BF16 every bfloat16 task (a "_packed" layer, a
     * batched product) has a tensorized program among its valid measurements. Returns how many bfloat16 tasks it
     * checked so (0 elsewhere).
     */
    private static int tuneRunRebuild(Graph bf, Path log) {
        CpuTarget target = Target.cpu();
        List<NetworkTask> tasks = Network.tasks(bf, target);
        int bf16Tasks = 0;
        try (LocalMeasurer m = LocalMeasurer.of(target, MeasureOptions.smoke());
                NDArray in = NDArray.random(FLOAT32, 5, bf.inputs().getFirst().dims());
                NodeRunner ref = NodeRunner.interpreter();
                NDArray expected = ReferenceExecutor.run(bf, ref, in).getFirst();
                CompiledNetwork cn = Network.tune(bf, target, RandomTuning.options(6 * tasks.size(), 3, 4, log, m));
                NDArray tuned = cn.run(in);
                CompiledNetwork built = Network.build(bf, target, log);
                NDArray again = built.run(in)) {
            // every task has a program (a lone cast of the input has one program, and its search ends there)
            List<TaskResult> results = cn.tuning().orElseThrow().tasks();
            assertThat(results).allSatisfy(t -> assertThat(t.best()).isPresent());
            tuned.assertClose(expected, 1e-4, 1e-4);
            again.assertClose(tuned, 1e-6, 1e-6);
            if (!bf16Dot()) return bf16Tasks;
            // the search ran the instructions on every bfloat16 task: one of its valid programs is tensorized (its best
            // is whichever measured fastest: a one-row matmul's rfactor program can win under load)
            List<LogRecord> records = TuningLog.open(log).records();
            for (NetworkTask t : tasks) {
                if (!t.description().contains("_packed") && !t.description().startsWith("batch_matmul")) continue;
                bf16Tasks++;
                assertThat(records)
                        .filteredOn(r -> r.workloadKey().equals(t.task().workloadKey()) && r.isValid())
                        .as(t.description() + " runs on the bfloat16 dot-product instructions")
                        .anyMatch(
                                r -> r.schedule(t.task()).steps().stream().anyMatch(st -> st instanceof TensorizeStep));
            }
        }
        return bf16Tasks;
    }
}
