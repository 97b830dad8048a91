package dev.kiln.autoschedule.sketch;

import static dev.kiln.autoschedule.Workloads.task;
import static org.assertj.core.api.Assertions.assertThat;

import dev.kiln.autoschedule.Workloads;
import dev.kiln.autoschedule.analysis.StagePredicates;
import dev.kiln.autoschedule.search.TargetRules;
import dev.kiln.schedule.ComputeAtKind;
import dev.kiln.schedule.LoopState;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The sketch counts of Ansor's CPU sketch tests (notes §4.5), on the same computations and
 * Ansor's 4-core hardware parameters, with the structure checks those tests make.
 */
class SketchGenerationTest {

    private static List<Sketch> sketches(dev.kiln.te.ComputeDAG dag) {
        // Ansor's rules alone: the counts below are its (notes §4.5); Kiln's packing sketches are
        // AddCacheReadPackTest's
        return TargetRules.ansorCpu().sketches(task(dag));
    }

    @Test
    void matmul512HasThreeSketches() {
        List<Sketch> s = sketches(Workloads.matmul(512, 512, 512));
        assertThat(s).hasSize(3);
        // 0: plain multi-level tiling
        assertThat(StagePredicates.isTiled(s.get(0).state().stage(2))).isTrue();
        assertThat(s.get(0).state().stages()).hasSize(3);
        // 1, 2: cache write, the local stage tiled and computed inside the tiles of the copy, at two levels
        for (int k = 1; k <= 2; k++) {
            LoopState st = s.get(k).state();
            assertThat(StagePredicates.hasCacheWriteStage(st, 2)).isTrue();
            assertThat(st.stage(2).name()).isEqualTo("matmul.local");
            assertThat(StagePredicates.isTiled(st.stage(2))).isTrue();
            assertThat(st.stage(2).computeAt()).isEqualTo(ComputeAtKind.ITER);
            assertThat(StagePredicates.isTiled(st.stage(3))).isTrue();
        }
        assertThat(s.get(1).state().toString()).isNotEqualTo(s.get(2).state().toString());
        // the local stage sits at j.0 (level 1) and at j.1 (level 2) of the copy
        assertThat(s.get(1).state().stage(3).iter(1).name()).isEqualTo("j.0");
        assertThat(s.get(2).state().stage(3).iter(3).name()).isEqualTo("j.1");
        // SSRSRS order of the tiled matmul
        assertThat(s.get(0).state().stage(2).iters().stream()
                        .map(it -> it.name())
                        .toList())
                .containsExactly("i.0", "j.0", "i.1", "j.1", "k.0", "i.2", "j.2", "k.1", "i.3", "j.3");
        for (Sketch k : s) assertThat(k.undecidedSplits()).isEqualTo(3);
    }

    @Test
    void smallSpatialMatmulAddsTwoRfactorSketches() {
        List<Sketch> s = sketches(Workloads.matmul(8, 8, 512));
        assertThat(s).hasSize(5);
        for (int k = 0; k < 2; k++) {
            assertThat(StagePredicates.hasRfactorStage(s.get(k).state(), 2)).isTrue();
            assertThat(s.get(k).state().stage(2).name()).isEqualTo("matmul.rf");
            // the split before rfactor is undecided in the steps, decided at 1 in the state
            assertThat(s.get(k).undecidedSplits()).isEqualTo(1);
            assertThat(s.get(k).state().isConcrete()).isTrue();
        }
        assertThat(s.get(0).state().toString()).isNotEqualTo(s.get(1).state().toString());
        // the inner variant puts the factored axis innermost
        assertThat(s.get(1).state().stage(2).iters().getLast().name()).isEqualTo("k.1");
        assertThat(StagePredicates.isTiled(s.get(2).state().stage(2))).isTrue();
        for (int k = 3; k < 5; k++) {
            assertThat(StagePredicates.hasCacheWriteStage(s.get(k).state(), 2)).isTrue();
            assertThat(s.get(k).state().stage(2).computeAt()).isEqualTo(ComputeAtKind.ITER);
        }
        assertThat(s.get(3).state().toString()).isNotEqualTo(s.get(4).state().toString());
    }

    @Test
    void doubleMatmulHasThreeTimesThree() {
        List<Sketch> s = sketches(Workloads.doubleMatmul(512));
        assertThat(s).hasSize(9);
        assertThat(StagePredicates.isTiled(s.get(8).state().stage(5))).isTrue();
    }

    @Test
    void conv2dBnReluFusesAtTwoLevelsOrTilesAlone() {
        List<Sketch> s = sketches(Workloads.conv2dBnRelu(1, 56, 56, 512, 512, 3, 1, 1));
        assertThat(s).hasSize(3);
        // stages: 0 Data, 1 pad, 2 Kernel, 3 conv, 4 Bias, 5 Bias_add, 6 Bn_scale, 7 Bn_mul, 8 Bn_offset, 9 Bn_add, 10
        // relu
        for (int k = 0; k < 3; k++) {
            LoopState st = s.get(k).state();
            assertThat(st.stage(1).name()).isEqualTo("pad");
            assertThat(StagePredicates.isTiled(st.stage(1))).isFalse();
            assertThat(StagePredicates.isTiled(st.stage(3))).isTrue();
            assertThat(st.stage(3).computeAt()).isEqualTo(k < 2 ? ComputeAtKind.ITER : ComputeAtKind.ROOT);
            for (int inl : new int[] {5, 7, 9})
                assertThat(st.stage(inl).computeAt()).isEqualTo(ComputeAtKind.INLINED);
            assertThat(StagePredicates.isTiled(st.stage(10))).isEqualTo(k < 2);
        }
    }

    /** A depthwise conv, its bias and ReLU6 as MobileNet-V2 has them (NHWC, 3x3, 32 channels). */
    private static dev.kiln.te.ComputeDAG depthwiseBiasClip() {
        var data = dev.kiln.te.Te.placeholder("data", dev.kiln.ir.DType.FLOAT32, 1, 28, 28, 32);
        var weight = dev.kiln.te.Te.placeholder("weight", dev.kiln.ir.DType.FLOAT32, 3, 3, 32, 1);
        var bias = dev.kiln.te.Te.placeholder("bias", dev.kiln.ir.DType.FLOAT32, 32);
        var conv = dev.kiln.nn.Conv.depthwiseConv2dNhwc(data, weight, 1, 1);
        return dev.kiln.te.ComputeDAG.of(
                dev.kiln.nn.Activation.clip(dev.kiln.nn.Elementwise.biasAdd(conv, bias, 3), 0, 6));
    }

    @Test
    void aDepthwiseConvIsAlwaysFusedIntoItsEpilogueInKilnsSpace() {
        var dag = depthwiseBiasClip();
        List<Sketch> kiln = TargetRules.cpu().sketches(task(dag));
        List<Sketch> ansor = sketches(dag);
        java.util.function.Function<Sketch, ComputeAtKind> where = sk ->
                sk.state().stage(sk.state().stageIndex("depthwise_conv2d_nhwc")).computeAt();
        assertThat(kiln).isNotEmpty().allSatisfy(sk -> assertThat(where.apply(sk))
                .as("the conv is computed inside its epilogue: %s", sk.steps())
                .isEqualTo(ComputeAtKind.ITER));
        // Ansor's space also tiles it alone, its whole result in a temporary the epilogue reads back
        assertThat(ansor).anySatisfy(sk -> assertThat(where.apply(sk)).isEqualTo(ComputeAtKind.ROOT));
        int conv = kiln.getFirst().state().stageIndex("depthwise_conv2d_nhwc");
        var a = dev.kiln.autoschedule.analysis.AccessAnalyzer.of(kiln.getFirst().state());
        assertThat(StagePredicates.readsAnInputWithoutReuse(a, kiln.getFirst().state(), conv))
                .isTrue();
        // a conv reuses its input: both spaces keep the unfused sketch (conv2dBnReluFusesAtTwoLevelsOrTilesAlone)
        List<Sketch> conv2d = TargetRules.cpu().sketches(task(Workloads.conv2dBnRelu(1, 14, 14, 64, 64, 3, 1, 1)));
        assertThat(conv2d)
                .anySatisfy(sk -> assertThat(sk.state().stage(3).computeAt()).isEqualTo(ComputeAtKind.ROOT));
    }

    @Test
    void maxPoolHasOneEmptySketch() {
        List<Sketch> s = sketches(Workloads.maxPool2d(1, 56, 56, 512, 1));
        assertThat(s).hasSize(1);
        assertThat(s.get(0).steps()).isEmpty();
    }

    /**
     * Kiln's space: an NHWC max pool (3x3, stride 2, 64 channels) gets the vector-lane sketches, its reduction loops
     * between the channel loop's outer part and 16, 32 or 64 channels, besides Ansor's rfactor and default ones; an
     * NCHW pool (its innermost axis strided in the read) and a reduction over the last axis do not.
     */
    @Test
    void anNhwcPoolGetsItsReductionOutsideWholeVectorsOfChannels() {
        var pool = dev.kiln.nn.Pool.maxPool2dNhwc(
                dev.kiln.te.Te.placeholder("x", dev.kiln.ir.DType.FLOAT32, 1, 16, 16, 64), 3, 2, 1);
        var task = task(dev.kiln.te.ComputeDAG.of(pool));
        List<Sketch> s = TargetRules.cpu().sketches(task);
        int lanes = task.hardware().lanes(4);
        List<List<String>> vectorSketches = s.stream()
                .filter(k -> k.steps().stream()
                        .anyMatch(st -> st instanceof dev.kiln.schedule.SplitStep sp
                                && !StagePredicates.hasRfactorStage(k.state(), sp.stageId())))
                .map(k -> k.state().stage(k.state().stages().size() - 1).iters().stream()
                        .map(it -> it.name() + "=" + it.extent())
                        .toList())
                .toList();
        List<List<String>> want = new java.util.ArrayList<>();
        for (int v : new int[] {1, 2, 4}) {
            if (v * lanes > 64) continue;
            want.add(List.of("i=1", "j=8", "k=8", "l.0=" + 64 / (v * lanes), "rh=3", "rw=3", "l.1=" + v * lanes));
        }
        assertThat(vectorSketches).containsExactlyElementsOf(want);
        assertThat(s).anySatisfy(k -> assertThat(k.steps()).isEmpty());
        assertThat(s).hasSize(want.size() + 3); // and two rfactor sketches (9 > 4 cores) and the default
        for (var dag : List.of(Workloads.maxPool2d(1, 16, 16, 64, 1), Workloads.minNm(10, 1024))) {
            assertThat(TargetRules.cpu().sketches(task(dag)))
                    .as("no vector-lane sketch for %s", dag)
                    .allSatisfy(k -> assertThat(k.steps())
                            .noneMatch(st -> st instanceof dev.kiln.schedule.ReorderStep r
                                    && !StagePredicates.hasRfactorStage(k.state(), r.stageId())));
        }
    }

    @Test
    void minReductionHasTwoRfactorSketchesAndTheDefault() {
        List<Sketch> s = sketches(Workloads.minNm(10, 1024));
        assertThat(s).hasSize(3);
        assertThat(StagePredicates.hasRfactorStage(s.get(0).state(), 1)).isTrue();
        assertThat(StagePredicates.hasRfactorStage(s.get(1).state(), 1)).isTrue();
        assertThat(s.get(0).state().toString()).isNotEqualTo(s.get(1).state().toString());
        assertThat(s.get(2).steps()).isEmpty();
    }

    @Test
    void softmaxIsThreeTimesThree() {
        for (var dag : List.of(Workloads.softmaxNm(1, 1024), Workloads.softmaxAbcd(1, 12, 128, 128))) {
            List<Sketch> s = sketches(dag);
            assertThat(s).hasSize(9);
            for (int i = 0; i < 3; i++) {
                for (int j = 0; j < 3; j++) {
                    LoopState st = s.get(i * 3 + j).state();
                    if (j < 2)
                        assertThat(StagePredicates.hasRfactorStage(st, 1)).isTrue();
                    if (i < 2)
                        assertThat(StagePredicates.hasRfactorStage(st, j < 2 ? 4 : 3))
                                .isTrue();
                }
            }
            assertThat(s.get(8).steps()).isEmpty();
        }
    }

    @Test
    void sketchesAreTheSameEveryTime() {
        var dag = Workloads.conv2dBnRelu(1, 14, 14, 16, 32, 3, 1, 1);
        List<Sketch> a = sketches(dag), b = sketches(dag);
        assertThat(a).hasSameSizeAs(b);
        for (int i = 0; i < a.size(); i++)
            assertThat(a.get(i).steps()).isEqualTo(b.get(i).steps());
    }

    @Test
    void customRulesComeFirst() {
        // Ansor's test_cpu_custom_sketch: a rule that stops the search with the state as it is
        // and with C's i split by [8, 2]
        SketchRule custom = new SketchRule() {
            @Override
            public String name() {
                return "Custom";
            }

            @Override
            public Condition condition(
                    dev.kiln.autoschedule.SearchTask t,
                    dev.kiln.autoschedule.analysis.AccessAnalyzer a,
                    LoopState s,
                    int stageId) {
                return Condition.APPLY_AND_SKIP_REST;
            }

            @Override
            public List<Derivation> apply(
                    dev.kiln.autoschedule.SearchTask t,
                    dev.kiln.autoschedule.analysis.AccessAnalyzer a,
                    LoopState s,
                    int stageId) {
                LoopState split = s.apply(new dev.kiln.schedule.SplitStep(2, 0, 512L, List.of(8, 2), true));
                return List.of(new Derivation(s, -1), new Derivation(split, -1));
            }
        };
        List<Sketch> s = TargetRules.cpu()
                .withCustomSketchRules(List.of(custom))
                .sketches(task(Workloads.matmul(512, 512, 512)));
        assertThat(s).hasSize(2);
        assertThat(s.get(0).state().stage(2).iters().stream()
                        .map(it -> it.extent())
                        .toList())
                .containsExactly(512L, 512L, 512L);
        assertThat(s.get(1).state().stage(2).iters().stream()
                        .map(it -> it.extent())
                        .toList())
                .containsExactly(32L, 8L, 2L, 512L, 512L);
    }
}
