package dev.kiln.autoschedule.network;

import static dev.kiln.ir.DType.FLOAT32;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kiln.autoschedule.measure.CallTimer;
import dev.kiln.autoschedule.measure.ClassPathOnly;
import dev.kiln.autoschedule.measure.FaultyBackend;
import dev.kiln.graph.Graph;
import dev.kiln.graph.NodeRunner;
import dev.kiln.graph.ReferenceExecutor;
import dev.kiln.graph.fuse.Partition;
import dev.kiln.ir.KilnException;
import dev.kiln.models.Models;
import dev.kiln.runtime.NDArray;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The executor on the interpreter-backed test backend: results, memory reuse, errors. */
@ClassPathOnly
class CompiledNetworkTest {

    /** Float32 tolerance: the compiled network sums in another order only where BN was folded. */
    static final double RTOL = 1e-4, ATOL = 1e-4;

    @Test
    void untunedResnetMatchesTheReferenceRun() {
        Graph net = Models.resnet18(1, 32, 4, 10, 5);
        try (CompiledNetwork cn = Network.buildUntuned(net, FaultyBackend.TARGET);
                NDArray x = NDArray.random(FLOAT32, 11, 1, 32, 32, 3);
                NodeRunner r = NodeRunner.interpreter()) {
            NDArray expected = ReferenceExecutor.run(net, r, x).getFirst();
            try (NDArray y = cn.run(x)) {
                y.assertClose(expected, RTOL, ATOL);
            }
            // a second run into the caller's array gives the same numbers (memory reuse leaves no stale state)
            try (NDArray y2 = NDArray.allocate(FLOAT32, 1, 10)) {
                cn.run(new NDArray[] {x}, new NDArray[] {y2});
                y2.assertClose(expected, RTOL, ATOL);
            }
            expected.close();
            assertThat(cn.kernelCalls()).isEqualTo(cn.partition().groups().size() - 1); // the flatten is a view
        }
    }

    @Test
    void aSecondMemoryPlanGivesTheSameNumbersAndIsCompared() {
        Graph net = Models.mobilenetV2(1, 32, 1);
        try (CompiledNetwork cn = Network.buildUntuned(net, FaultyBackend.TARGET);
                NDArray x = NDArray.random(FLOAT32, 13, net.inputs().getFirst().dims());
                NodeRunner r = NodeRunner.interpreter()) {
            NDArray expected = ReferenceExecutor.run(net, r, x).getFirst();
            CompiledNetwork.Variant recent = cn.withMemoryPlan(MemoryPlan.Reuse.RECENT);
            assertThat(recent.name()).contains("RECENT");
            recent.run(new NDArray[] {x}, null);
            cn.ownOutputs()[0].assertClose(expected, RTOL, ATOL);
            double[] perCall = new double[cn.kernelCalls()];
            recent.run(new NDArray[] {x}, perCall);
            assertThat(java.util.Arrays.stream(perCall).min().orElseThrow()).isPositive();
            cn.ownOutputs()[0].assertClose(expected, RTOL, ATOL);
            VariantComparison c = cn.compare(1, 3, new NDArray[] {x}, List.of(cn.asBuilt(), recent));
            assertThat(c.rows()).hasSize(2);
            assertThat(c.rows().get(1).times().calls()).isEqualTo(2); // runs 0 and 2 whole, run 1 call by call
            for (VariantComparison.Row row : c.rows()) {
                assertThat(row.callMinima()).isPositive().isLessThanOrEqualTo(row.callMedians());
                assertThat(row.perCallMedians()).hasSize(cn.kernelCalls());
                assertThat(java.util.Arrays.stream(row.perCallMedians()).sum())
                        .isCloseTo(row.callMedians(), org.assertj.core.data.Offset.offset(1e-12));
            }
            assertThat(c.describe()).contains("BEST_FIT", "RECENT", "by medians", "sum of minima");
            assertThat(cn.callLabels()).hasSize(cn.kernelCalls()).allMatch(l -> l.contains("(task "));
            assertThat(c.callDifferences(1, cn.callLabels(), 3).lines()).hasSize(1 + 3);
            CompiledNetwork.Variant renamed = recent.named("B: recent");
            assertThat(renamed.name()).isEqualTo("B: recent");
            renamed.run(new NDArray[] {x}, null); // the same runs under the new name
            cn.ownOutputs()[0].assertClose(expected, RTOL, ATOL);
            cn.ownOutputs()[0].assertClose(expected, RTOL, ATOL); // the variants ran last in either order
            try (NDArray y = cn.run(x)) { // the network's own arena is untouched by the second plan
                y.assertClose(expected, RTOL, ATOL);
            }
            expected.close();
            assertThatThrownBy(() -> cn.compare(0, 1, new NDArray[] {x}, List.of(recent)))
                    .isInstanceOf(KilnException.class)
                    .hasMessageContaining("runs");
        }
    }

    @Test
    void callDifferencesListTheCallsThatDifferMostFirst() {
        CallTimer.Stats runs = new CallTimer.Stats(new double[] {1e-3, 2e-3}, null);
        VariantComparison c = new VariantComparison(List.of(
                new VariantComparison.Row("A", runs, 0, 5e-3, new double[] {1e-3, 2e-3, 3e-3}),
                new VariantComparison.Row("B", runs, 0, 5e-3, new double[] {1.1e-3, 1e-3, 3.4e-3})));
        List<String> lines = c.callDifferences(1, List.of("conv (task 0)", "dense (task 1)", "pool (task 2)"), 2)
                .lines()
                .toList();
        assertThat(lines).hasSize(3);
        assertThat(lines.get(0)).contains("A ms", "B ms", "A/B");
        // call 1 differs by 1 ms (A/B 2.000), call 2 by 0.4 ms (0.882); call 0 (0.1 ms) left out
        assertThat(lines.get(1)).startsWith("1 ").contains("dense (task 1)", "2.0000", "1.0000", "2.000");
        assertThat(lines.get(2)).startsWith("2 ").contains("pool (task 2)", "0.882");
        assertThatThrownBy(() -> c.callDifferences(1, List.of("one label"), 2))
                .isInstanceOf(KilnException.class)
                .hasMessageContaining("1 labels for 3 calls");
    }

    @Test
    void bertLayerMatchesTheReferenceRun() {
        Graph net = Models.bertLayer(16, 32, 4, 64, 2);
        try (CompiledNetwork cn = Network.buildUntuned(net, FaultyBackend.TARGET);
                NDArray x = NDArray.random(FLOAT32, 3, 16, 32);
                NodeRunner r = NodeRunner.interpreter()) {
            NDArray expected = ReferenceExecutor.run(net, r, x).getFirst();
            try (NDArray y = cn.run(x)) {
                y.assertClose(expected, RTOL, ATOL);
            }
            expected.close();
        }
    }

    @Test
    void noTwoLiveValuesShareMemoryAndMemoryIsReused() {
        for (Graph net : List.of(
                Models.resnet50(1, 224, 1), Models.mobilenetV2(1, 224, 1), Models.bertLayer(128, 768, 12, 3072, 1))) {
            Partition p = Network.partition(net);
            MemoryPlan plan = MemoryPlan.plan(p);
            List<String> vs = new ArrayList<>(plan.offsets().keySet());
            for (int i = 0; i < vs.size(); i++) {
                for (int j = i + 1; j < vs.size(); j++) {
                    String a = vs.get(i), b = vs.get(j);
                    long[] ia = plan.intervals().get(a), ib = plan.intervals().get(b);
                    boolean liveTogether = ia[0] <= ib[1] && ib[0] <= ia[1];
                    long oa = plan.offsets().get(a), ob = plan.offsets().get(b);
                    long ea = oa + p.graph().value(a).bytes(),
                            eb = ob + p.graph().value(b).bytes();
                    boolean overlap = oa < eb && ob < ea;
                    if (liveTogether && overlap) {
                        assertThat(plan.views().contains(a) || plan.views().contains(b))
                                .as(
                                        "%s %s and %s %s overlap in memory while both live",
                                        a, List.of(ia[0], ia[1]), b, List.of(ib[0], ib[1]))
                                .isTrue();
                    }
                }
            }
            assertThat(plan.totalBytes()).as(net.name()).isLessThan(plan.unplannedBytes(p.graph()) / 3);
        }
    }

    @Test
    void taskExtractionDeduplicatesAndWeighs() {
        // the direct convolutions (Network.partition without a target keeps them)
        List<NetworkTask> tasks =
                TaskExtraction.extract(Network.partition(Models.resnet50(1, 224, 1)), FaultyBackend.TARGET, true);
        long convTasks =
                tasks.stream().filter(t -> t.description().startsWith("conv2d")).count();
        int convGroups = tasks.stream()
                .filter(t -> t.description().startsWith("conv2d"))
                .mapToInt(NetworkTask::weight)
                .sum();
        assertThat(convGroups).isEqualTo(53);
        assertThat(convTasks).isBetween(23L, 28L);
        assertThat(tasks).anySatisfy(t -> assertThat(t.description()).startsWith("max_pool2d"));
        assertThat(tasks).anySatisfy(t -> assertThat(t.description()).startsWith("dense+bias_add"));
        double gflop =
                tasks.stream().mapToDouble(t -> t.weight() * (double) t.flops()).sum() / 1e9;
        assertThat(gflop).isBetween(8.1, 8.3); // ResNet-50 v1.5: 8.18 GFLOP of conv and dense, plus epilogues
        Map<String, Long> byWeight = new java.util.TreeMap<>();
        tasks.forEach(t -> byWeight.merge(t.description(), (long) t.weight(), Long::sum));
        assertThat(tasks.stream().mapToInt(NetworkTask::weight).sum())
                .isEqualTo(
                        Network.partition(Models.resnet50(1, 224, 1)).groups().size() - 1);
        // as the CPU target tunes it: the 13 stride-1 3x3 convs by Winograd (F(4x4) in layer 2, F(2x2) in the
        // others), 4x and 2.25x fewer multiplications in their GEMMs
        List<NetworkTask> wino = Network.tasks(Models.resnet50(1, 224, 1), FaultyBackend.TARGET);
        assertThat(wino.stream()
                        .filter(t -> t.description().startsWith("conv2d_winograd"))
                        .mapToInt(NetworkTask::weight)
                        .sum())
                .isEqualTo(Network.winograd(FaultyBackend.TARGET) ? 13 : 0);
        double winoGflop =
                wino.stream().mapToDouble(t -> t.weight() * (double) t.flops()).sum() / 1e9;
        if (Network.winograd(FaultyBackend.TARGET)) assertThat(winoGflop).isBetween(6.7, 6.9);
    }

    @Test
    void buildFromALogWithoutTheTasksNamesThem(@TempDir Path dir) throws Exception {
        Path log = dir.resolve("empty.jsonl");
        Files.writeString(log, "");
        assertThatThrownBy(() -> Network.build(Models.resnet18(1, 32, 4, 10, 1), FaultyBackend.TARGET, log))
                .isInstanceOf(KilnException.class)
                .hasMessageContaining("have no valid program in the log")
                .hasMessageContaining("conv2d+bias_add+relu");
    }

    @Test
    void badInputsAreNamed() {
        try (CompiledNetwork cn = Network.buildUntuned(Models.resnet18(1, 32, 4, 10, 5), FaultyBackend.TARGET);
                NDArray wrong = NDArray.allocate(FLOAT32, 1, 32, 32, 4)) {
            assertThatThrownBy(() -> cn.run(wrong))
                    .isInstanceOf(KilnException.class)
                    .hasMessageContaining("input 0 'data'");
            assertThatThrownBy(() -> cn.run()).isInstanceOf(KilnException.class).hasMessageContaining("takes 1 input");
        }
    }
}
