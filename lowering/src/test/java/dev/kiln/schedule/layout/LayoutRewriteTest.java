package dev.kiln.schedule.layout;

import static dev.kiln.ir.DType.FLOAT32;
import static dev.kiln.schedule.layout.LayoutRewriteTesting.check;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kiln.ir.KilnException;
import dev.kiln.lower.Lowering;
import dev.kiln.nn.Activation;
import dev.kiln.nn.Conv;
import dev.kiln.nn.ConvParams;
import dev.kiln.nn.Elementwise;
import dev.kiln.nn.Linalg;
import dev.kiln.schedule.LoopState;
import dev.kiln.schedule.Schedule;
import dev.kiln.schedule.ScheduleBuilder;
import dev.kiln.schedule.ScheduleException;
import dev.kiln.schedule.SplitStep;
import dev.kiln.te.ComputeDAG;
import dev.kiln.te.Te;
import dev.kiln.te.Tensor;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Layout rewrite against the reference interpreter: each test schedules an operator by hand,
 * rewrites its weights, and {@link LayoutRewriteTesting#check} runs both programs (tolerance 0).
 * The tests also check the derived layout and that the lowered program indexes the packed weight
 * with plain loop variables (no floordiv or floormod left by the simplifier).
 */
class LayoutRewriteTest {

    /** conv2d NHWC + bias + relu; the conv stage is named "conv2d_nhwc", axes i, j, k, l, rh, rw, rc. */
    record Conv2d(ComputeDAG dag, Tensor data, Tensor w, Tensor bias) {
        static Conv2d of(long h, long ci, long co, long kernel, long stride, long pad, long groups) {
            Tensor data = Te.placeholder("data", FLOAT32, 1, h, h, ci);
            Tensor w = Te.placeholder("W", FLOAT32, kernel, kernel, ci / groups, co);
            Tensor b = Te.placeholder("b", FLOAT32, co);
            ConvParams p = ConvParams.of(2, stride, pad).withGroups(groups);
            Tensor out = Activation.relu(Elementwise.biasAdd(Conv.conv2dNhwc(data, w, p), b, 3));
            return new Conv2d(ComputeDAG.of(out), data, w, b);
        }
    }

    /**
     * In the lowered program of the rewritten schedule, every read of a packed weight is indexed
     * without floordiv or floormod: the simplifier turned each digit back into a loop variable.
     * (A fused loop, {@code i.0@j.0@}, is itself read back through floordiv/floormod; those stay.)
     */
    static void assertPlainIndices(LayoutRewrite.Result r) {
        String program = Lowering.lower("f", r.schedule()).toString();
        for (LayoutRewrite.Transform t : r.transforms()) {
            List<String> reads =
                    LayoutRewriteTesting.indexTexts(program, t.rewritten().name());
            assertThat(reads).as(program).isNotEmpty();
            for (String idx : reads)
                assertThat(idx.replaceAll("floor(div|mod)\\([^(),]*@[^(),]*, \\d+\\)", "fused"))
                        .as(program)
                        .doesNotContain("floordiv")
                        .doesNotContain("floormod");
        }
    }

    @Test
    void conv3x3TiledAtRoot() {
        Conv2d c = Conv2d.of(8, 8, 16, 3, 1, 1, 1);
        ScheduleBuilder sb = ScheduleBuilder.on(c.dag());
        var conv = sb.stage("conv2d_nhwc");
        conv.split("l", 4);
        conv.split("rc", 4);
        conv.reorder("i", "j", "l.0", "rh", "rw", "rc.0", "k", "rc.1", "l.1");
        LayoutRewrite.Result r = check(sb.build(), Set.of(c.w(), c.bias()), 1);
        assertThat(r.rewritten()).isTrue();
        LayoutRewrite.Transform t = r.transform(c.w()).orElseThrow();
        assertThat(t.argument()).isEqualTo(1);
        assertThat(t.reader()).isEqualTo("conv2d_nhwc");
        assertThat(t.layout().toString()).isEqualTo("[l/4:4, rh:3, rw:3, rc/4:2, rc%4:4, l%4:4]");
        assertThat(t.newShape()).containsExactly(4, 3, 3, 2, 4, 4);
        assertThat(r.schedule().dag().arguments().get(1).shape().toArray()).containsExactly(4, 3, 3, 2, 4, 4);
        // the bias is read by an untiled stage: left alone, with the reason
        assertThat(r.skipped()).singleElement().satisfies(s -> {
            assertThat(s.placeholder()).isSameAs(c.bias());
            assertThat(s.reason()).contains("bias_add").contains("own layout");
        });
        assertPlainIndices(r);
    }

    /**
     * Ansor's fused tiling: pad and bias inlined, the conv computed inside the relu's tiles
     * (whose outer loops are fused and parallel), its own loops split and reordered. The outer
     * tile of the output channels comes from the relu's loop, the rest from the conv's.
     */
    static Schedule fusedTiling(Conv2d c, int kTile, int lTile, int rcTile) {
        ScheduleBuilder sb = ScheduleBuilder.on(c.dag());
        sb.stage("pad").computeInline();
        sb.stage("bias_add").computeInline();
        var relu = sb.stage("relu");
        var conv = sb.stage("conv2d_nhwc");
        relu.split("k", kTile);
        relu.split("l", lTile);
        relu.reorder("i", "j", "k.0", "l.0", "k.1", "l.1");
        conv.computeAt(relu, "l.0");
        relu.parallel(relu.fuse("i", "j", "k.0"));
        relu.vectorize("l.1");
        conv.split("rc", rcTile);
        conv.reorder("i", "j", "rh", "rw", "rc.0", "rc.1", "k", "l");
        conv.vectorize("l");
        return sb.build();
    }

    @Test
    void conv3x3ComputedInsideFusedConsumer() {
        Conv2d c = Conv2d.of(8, 8, 16, 3, 1, 1, 1);
        LayoutRewrite.Result r = check(fusedTiling(c, 4, 8, 4), Set.of(c.w()), 2);
        assertThat(r.transform(c.w()).orElseThrow().layout().toString())
                .isEqualTo("[l/8:2, rh:3, rw:3, rc/4:2, rc%4:4, l%8:8]");
        assertPlainIndices(r);
    }

    /**
     * A residual block's output: conv -> add(conv, residual) -> relu, the add reading both operands' batch of 1 at
     * index 0 as a broadcasting op does (the ONNX import's and the graph's binary ops), inlined, and the conv computed
     * inside the relu's tiles. The 0 stands for the unit batch axis, so the weight is packed as in the plain fused
     * tiling (before, the derivation gave up: "reads it at 0 on axis 0", and every ResNet-50 residual conv read its
     * weights in their own layout, one strided row per reduction step).
     */
    @Test
    void convInsideAResidualAddThatReadsTheUnitBatchAtZero() {
        Tensor data = Te.placeholder("data", FLOAT32, 1, 8, 8, 8);
        Tensor w = Te.placeholder("W", FLOAT32, 3, 3, 8, 16);
        Tensor conv = Conv.conv2dNhwc(data, w, ConvParams.of(2, 1, 1));
        Tensor residual = Te.placeholder("residual", FLOAT32, 1, 8, 8, 16);
        Tensor add = Te.compute("add", Te.shape(1, 8, 8, 16), (n, h, x, c) -> conv.at(Te.i32(0), h, x, c)
                .add(residual.at(Te.i32(0), h, x, c)));
        ComputeDAG dag = ComputeDAG.of(Activation.relu(add));
        ScheduleBuilder sb = ScheduleBuilder.on(dag);
        sb.stage("pad").computeInline();
        sb.stage("add").computeInline();
        var relu = sb.stage("relu");
        var cs = sb.stage("conv2d_nhwc");
        relu.split("k", 4);
        relu.split("l", 8);
        relu.reorder("i", "j", "k.0", "l.0", "k.1", "l.1");
        cs.computeAt(relu, "l.0");
        relu.parallel(relu.fuse("i", "j", "k.0"));
        relu.vectorize("l.1");
        cs.split("rc", 4);
        cs.reorder("i", "j", "rh", "rw", "rc.0", "rc.1", "k", "l");
        cs.vectorize("l");
        LayoutRewrite.Result r = check(sb.build(), Set.of(w), 5);
        assertThat(r.skipped()).isEmpty();
        assertThat(r.transform(w).orElseThrow().layout().toString())
                .isEqualTo("[l/8:2, rh:3, rw:3, rc/4:2, rc%4:4, l%8:8]");
        assertPlainIndices(r);
    }

    @Test
    void conv3x3Stride2() {
        Conv2d c = Conv2d.of(9, 4, 8, 3, 2, 1, 1);
        LayoutRewrite.Result r = check(fusedTiling(c, 5, 4, 2), Set.of(c.w()), 3);
        assertThat(r.transform(c.w()).orElseThrow().newShape()).containsExactly(2, 3, 3, 2, 2, 4);
        assertPlainIndices(r);
    }

    @Test
    void conv1x1() {
        Conv2d c = Conv2d.of(6, 16, 8, 1, 1, 0, 1);
        ScheduleBuilder sb = ScheduleBuilder.on(c.dag());
        var conv = sb.stage("conv2d_nhwc");
        var local = conv.cacheWrite("local");
        conv.split("l", 4);
        conv.reorder("i", "j", "l.0", "k", "l.1");
        local.computeAt(conv, "l.0");
        local.split("rc", 8);
        local.reorder("i", "j", "rh", "rw", "rc.0", "k", "rc.1", "l");
        LayoutRewrite.Result r = check(sb.build(), Set.of(c.w()), 4);
        // the 1x1 window axes have extent 1 and no packed dimension
        assertThat(r.transform(c.w()).orElseThrow().layout().toString()).isEqualTo("[l/4:2, rc/8:2, rc%8:8, l%4:4]");
        assertThat(r.transform(c.w()).orElseThrow().reader()).isEqualTo("conv2d_nhwc");
        assertPlainIndices(r);
    }

    @Test
    void groupedConv() {
        Conv2d c = Conv2d.of(6, 8, 8, 3, 1, 1, 2);
        LayoutRewrite.Result r = check(fusedTiling(c, 3, 4, 2), Set.of(c.w(), c.bias()), 5);
        assertThat(r.transform(c.w()).orElseThrow().newShape()).containsExactly(2, 3, 3, 2, 2, 4);
        assertThat(r.skipped()).extracting(LayoutRewrite.Skipped::placeholder).containsExactly(c.bias());
    }

    @Test
    void depthwiseConv() {
        // multiplier 1: W[rh, rw, c, 0] reads the last axis at the constant 0
        Tensor data = Te.placeholder("data", FLOAT32, 1, 6, 6, 8);
        Tensor w = Te.placeholder("W", FLOAT32, 3, 3, 8, 1);
        ComputeDAG dag = ComputeDAG.of(Conv.depthwiseConv2dNhwc(data, w, 1, 1));
        ScheduleBuilder sb = ScheduleBuilder.on(dag);
        var dw = sb.stage("depthwise_conv2d_nhwc");
        dw.split("l", 4);
        dw.reorder("i", "l.0", "j", "k", "rh", "rw", "l.1");
        LayoutRewrite.Result r = check(sb.build(), Set.of(w), 6);
        assertThat(r.transform(w).orElseThrow().layout().toString()).isEqualTo("[l/4:2, rh:3, rw:3, l%4:4]");
        assertPlainIndices(r);

        // multiplier 2: the weight is read at floordiv/floormod of the output channel: left alone
        Tensor w2 = Te.placeholder("W", FLOAT32, 3, 3, 8, 2);
        ComputeDAG dag2 = ComputeDAG.of(Conv.depthwiseConv2dNhwc(data, w2, 1, 1));
        ScheduleBuilder sb2 = ScheduleBuilder.on(dag2);
        sb2.stage("depthwise_conv2d_nhwc").split("l", 4);
        LayoutRewrite.Result r2 = check(sb2.build(), Set.of(w2), 7);
        assertThat(r2.rewritten()).isFalse();
        assertThat(r2.schedule().dag()).isSameAs(dag2);
        assertThat(r2.skipped())
                .singleElement()
                .satisfies(s -> assertThat(s.reason()).contains("index 2").contains("floordiv"));
    }

    @Test
    void denseWithBiasAndCacheWrite() {
        Tensor x = Te.placeholder("x", FLOAT32, 8, 24);
        Tensor w = Te.placeholder("w", FLOAT32, 16, 24);
        Tensor b = Te.placeholder("b", FLOAT32, 16);
        ComputeDAG dag = ComputeDAG.of(Linalg.dense(x, w, b));
        ScheduleBuilder sb = ScheduleBuilder.on(dag);
        // dense_matmul: axes i (batch), j (units), reduce k; a cache_write register tile
        var mm = sb.stage("dense_matmul");
        var local = mm.cacheWrite("local");
        mm.split("i", 4);
        mm.split("j", 8);
        mm.reorder("i.0", "j.0", "i.1", "j.1");
        local.computeAt(mm, "j.0");
        mm.parallel(mm.fuse("i.0", "j.0"));
        local.split("k", 6);
        local.split("j", 4);
        local.reorder("k.0", "i", "j.0", "k.1", "j.1");
        local.vectorize("j.1");
        LayoutRewrite.Result r = check(sb.build(), Set.of(w, b), 8);
        assertThat(r.transform(w).orElseThrow().layout().toString())
                .isEqualTo("[j/8:2, k/6:4, (j/4)%2:2, k%6:6, j%4:4]");
        assertPlainIndices(r);
    }

    @Test
    void batchMatmulWithConstantSecondOperand() {
        for (long batchY : new long[] {1, 3}) {
            Tensor x = Te.placeholder("X", FLOAT32, 3, 4, 12);
            Tensor y = Te.placeholder("Y", FLOAT32, batchY, 12, 8);
            ComputeDAG dag = ComputeDAG.of(Linalg.batchMatmul(x, y));
            ScheduleBuilder sb = ScheduleBuilder.on(dag);
            LoopState st = sb.state();
            int s = st.stageIndex("batch_matmul");
            // loops i (batch), j, l, k (reduce; the third spatial axis gives way to it): split l (index 2) and k (index
            // 3)
            Schedule sched = new Schedule(
                    dag,
                    List.of(new SplitStep(s, 3, 12L, List.of(4), true), new SplitStep(s, 2, 8L, List.of(4), true)));
            // loops now i, j, l.0, l.1, k.0, k.1 (reduce)
            sched = sched.append(new dev.kiln.schedule.ReorderStep(s, List.of(0, 2, 4, 1, 5, 3)));
            LayoutRewrite.Result r = check(sched, Set.of(y), 9);
            String layout = r.transform(y).orElseThrow().layout().toString();
            assertThat(layout)
                    .as("batch %d", batchY)
                    .isEqualTo(batchY == 1 ? "[l/4:2, k/4:3, k%4:4, l%4:4]" : "[i:3, l/4:2, k/4:3, k%4:4, l%4:4]");
            assertPlainIndices(r);
        }
    }

    @Test
    void leavesAloneWhatItCannotRewrite() {
        // a split that does not divide the output channels leaves a guard
        Conv2d c = Conv2d.of(6, 4, 10, 3, 1, 1, 1);
        ScheduleBuilder sb = ScheduleBuilder.on(c.dag());
        sb.stage("conv2d_nhwc").split("l", 4);
        LayoutRewrite.Result r = check(sb.build(), Set.of(c.w()), 10);
        assertThat(r.rewritten()).isFalse();
        assertThat(r.skipped().get(0).reason()).contains("do not tile");

        // a weight copied by cache_read
        sb = ScheduleBuilder.on(c.dag());
        var conv = sb.stage("conv2d_nhwc");
        conv.split("l", 5);
        sb.stage("W").cacheRead("local", conv);
        r = check(sb.build(), Set.of(c.w()), 11);
        assertThat(r.skipped().get(0).reason()).contains("cache_read");

        // a weight read by two operations
        Tensor a = Te.placeholder("A", FLOAT32, 4, 6);
        Tensor w = Te.placeholder("W", FLOAT32, 6, 8);
        Tensor mm = Linalg.matmul(a, w);
        Tensor twice = Te.compute("plus", Te.shape(4, 8), (i, j) -> mm.at(i, j).add(w.at(Te.i32(0), j)));
        ComputeDAG dag = ComputeDAG.of(twice);
        sb = ScheduleBuilder.on(dag);
        sb.stage(mm).split(sb.stage(mm).loops().get(1).name(), 4);
        r = check(sb.build(), Set.of(w), 12);
        assertThat(r.skipped().get(0).reason()).contains("read by 2 operations");

        // a weight read by an inlined stage
        Tensor w2 = Te.placeholder("W", FLOAT32, 6, 8);
        Tensor scaled =
                Te.compute("scaled", Te.shape(6, 8), (i, j) -> w2.at(i, j).mul(2.0));
        ComputeDAG dag2 = ComputeDAG.of(Linalg.matmul(a, scaled));
        sb = ScheduleBuilder.on(dag2);
        sb.stage("scaled").computeInline();
        r = check(sb.build(), Set.of(w2), 13);
        assertThat(r.skipped().get(0).reason()).contains("inlined");

        // a strided read
        Tensor v = Te.placeholder("V", FLOAT32, 16);
        ComputeDAG dag3 = ComputeDAG.of(Te.compute("even", Te.shape(8), i -> v.at(i.mul(2))));
        sb = ScheduleBuilder.on(dag3);
        sb.stage("even").split("i", 4);
        r = check(sb.build(), Set.of(v), 14);
        assertThat(r.skipped().get(0).reason()).contains("index 0").contains("(i * 2)");
    }

    @Test
    void rejectsTensorsThatAreNotPlaceholdersOfTheDag() {
        Conv2d c = Conv2d.of(6, 4, 8, 3, 1, 1, 1);
        Tensor stranger = Te.placeholder("stranger", FLOAT32, 3, 3, 4, 8);
        Schedule s = Schedule.empty(c.dag());
        assertThatThrownBy(() -> LayoutRewrite.rewrite(s, Set.of(stranger)))
                .isInstanceOf(KilnException.class)
                .hasMessageContaining("'stranger'");
        Tensor conv = c.dag().ops().stream()
                .filter(o -> o.name().equals("conv2d_nhwc"))
                .findFirst()
                .orElseThrow()
                .output(0);
        assertThatThrownBy(() -> LayoutRewrite.rewrite(s, Set.of(conv)))
                .isInstanceOf(KilnException.class)
                .hasMessageContaining("'conv2d_nhwc'");
    }

    /** It is the DAG that changes: the steps, and their JSON, are the original ones. */
    @Test
    void jsonRoundTrip() {
        Conv2d c = Conv2d.of(8, 8, 16, 3, 1, 1, 1);
        Schedule s = fusedTiling(c, 4, 8, 4);
        LayoutRewrite.Result r = LayoutRewrite.rewrite(s, Set.of(c.w()));
        ComputeDAG rewritten = r.schedule().dag();
        assertThat(r.schedule().stepsJson()).isEqualTo(s.stepsJson());
        Schedule back = Schedule.fromSteps(s.stepsJson(), rewritten);
        assertThat(back.replay().toString()).isEqualTo(r.schedule().replay().toString());
        assertThat(Schedule.fromJson(r.schedule().toJson(), rewritten).steps()).isEqualTo(s.steps());
        // the rewritten DAG is another workload: a record of the original is refused by key
        assertThat(rewritten.workloadKey()).isNotEqualTo(c.dag().workloadKey());
        assertThatThrownBy(() -> Schedule.fromJson(s.toJson(), rewritten))
                .isInstanceOf(ScheduleException.class)
                .hasMessageContaining(c.dag().workloadKey());
        // and the program read back computes what the rewritten one computes
        check(back, Set.of(), 15);
    }
}
