package dev.kiln.autoschedule.search;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kiln.autoschedule.SearchTask;
import dev.kiln.autoschedule.Workloads;
import dev.kiln.autoschedule.annotate.InitRule;
import dev.kiln.autoschedule.annotate.InitUnroll;
import dev.kiln.autoschedule.mutation.MutateAutoUnroll;
import dev.kiln.autoschedule.mutation.MutateTileSize;
import dev.kiln.autoschedule.mutation.WeightedMutation;
import dev.kiln.autoschedule.sketch.SketchRule;
import dev.kiln.ir.KilnException;
import dev.kiln.target.CudaTarget;
import dev.kiln.target.Target;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The rule lists of each target kind: Ansor's orders and weights, picked by the task's typed target. */
class TargetRulesTest {

    static List<String> sketchNames(TargetRules r) {
        return r.sketchRules().stream().map(SketchRule::name).toList();
    }

    static List<String> mutations(TargetRules r) {
        return r.mutations().stream()
                .map(m -> m.rule().name() + "=" + m.weight())
                .toList();
    }

    @Test
    void cpuRulesAreAnsorsWithKilnsAdditions() {
        TargetRules cpu = TargetRules.of(Target.Kind.CPU);
        assertThat(sketchNames(cpu))
                .containsExactly(
                        "AlwaysInline",
                        "SimplifyComputeWithConstTensor",
                        "AddRfactor",
                        "MultiLevelTilingTensorize",
                        "MultiLevelTilingWithRowFusion",
                        "FuseRowReductions",
                        "AddCacheWrite",
                        "MultiLevelTilingWithFusion",
                        "MultiLevelTiling",
                        "AddCacheReadPack",
                        "VectorLanesOutsideReduction",
                        "SkipStage");
        assertThat(sketchNames(TargetRules.ansorCpu()))
                .containsExactly(
                        "AlwaysInline",
                        "SimplifyComputeWithConstTensor",
                        "AddRfactor",
                        "AddCacheWrite",
                        "MultiLevelTilingWithFusion",
                        "MultiLevelTiling",
                        "SkipStage");
        assertThat(cpu.initRules().stream().map(InitRule::name).toList())
                .containsExactly(
                        "InitKBlocking",
                        "InitChangeComputeLocation",
                        "InitReadOrder",
                        "InitParallel",
                        "InitUnroll",
                        "InitVectorization",
                        "CheckTensorizedTiles");
        assertThat(TargetRules.ansorCpu().initRules().stream()
                        .map(InitRule::name)
                        .toList())
                .containsExactly("InitChangeComputeLocation", "InitParallel", "InitUnroll", "InitVectorization");
        assertThat(mutations(cpu))
                .containsExactly(
                        "MutateTileSize=0.7",
                        "MutateRegisterTile=0.1",
                        "MutateKBlocking=0.05",
                        "MutateReductionTile=0.05",
                        "MutateAutoUnroll=0.04",
                        "MutateComputeLocation=0.05",
                        "MutateParallel=0.01");
        assertThat(mutations(TargetRules.ansorCpu()))
                .containsExactly(
                        "MutateTileSize=0.9",
                        "MutateAutoUnroll=0.04",
                        "MutateComputeLocation=0.05",
                        "MutateParallel=0.01");
        assertThat(((MutateAutoUnroll) cpu.mutations().get(4).rule()).choices()).isEqualTo(InitUnroll.CPU_STEPS);
    }

    @Test
    void cudaRulesAreAnsorsGpuLists() {
        TargetRules gpu = TargetRules.of(Target.Kind.CUDA);
        assertThat(sketchNames(gpu))
                .containsExactly(
                        "TensorCoreTiling", // Kiln's: one more sketch, for fp16/bf16 matmuls on sm_80+
                        "AddCacheRead",
                        "AlwaysInline",
                        "AddCacheWriteForFusion",
                        "AddCacheWrite",
                        "MultiLevelTilingWithFusion",
                        "MultiLevelTiling",
                        "SkipStage");
        assertThat(gpu.initRules().stream().map(InitRule::name).toList())
                .containsExactly("InitThreadBind", "InitUnroll", "CheckGpuLimits");
        assertThat(mutations(gpu)).containsExactly("MutateTileSize=0.9", "MutateAutoUnroll=0.1");
        assertThat(((MutateAutoUnroll) gpu.mutations().get(1).rule()).choices()).isEqualTo(InitUnroll.GPU_STEPS);
    }

    @Test
    void aTaskGetsTheRulesOfItsTargetsKind() {
        SearchTask cpu = Workloads.task(Workloads.matmul(16, 16, 16));
        SearchTask gpu = SearchTask.of(Workloads.matmul(16, 16, 16), CudaTarget.h200());
        assertThat(sketchNames(TargetRules.of(cpu))).isEqualTo(sketchNames(TargetRules.cpu()));
        assertThat(sketchNames(TargetRules.of(gpu))).isEqualTo(sketchNames(TargetRules.cuda()));
        assertThat(mutations(TargetRules.of(gpu.target()))).isEqualTo(mutations(TargetRules.cuda()));
        // the policies' forTask use them: a GPU task's random programs are thread-bound
        assertThat(RandomSearchPolicy.forTask(gpu, 3).nextBatch(4, java.util.Set.of()))
                .allSatisfy(c -> assertThat(c.key()).contains("threadIdx.x"));
    }

    @Test
    void customSketchRulesComeFirstAndBadListsAreRefused() {
        SketchRule custom = TargetRules.cpu().sketchRules().getLast();
        assertThat(sketchNames(TargetRules.cpu().withCustomSketchRules(List.of(custom)))
                        .getFirst())
                .isEqualTo("SkipStage");
        assertThatThrownBy(() ->
                        new TargetRules(List.of(), List.of(), TargetRules.cpu().mutations()))
                .isInstanceOf(KilnException.class)
                .hasMessageContaining("sketch rule");
        assertThatThrownBy(() -> new TargetRules(TargetRules.cpu().sketchRules(), List.of(), List.of()))
                .isInstanceOf(KilnException.class)
                .hasMessageContaining("mutation rule");
        assertThatThrownBy(() -> new WeightedMutation(new MutateTileSize(), 0))
                .isInstanceOf(KilnException.class)
                .hasMessageContaining("MutateTileSize")
                .hasMessageContaining("weight");
        assertThatThrownBy(() -> new MutateAutoUnroll(List.of()))
                .isInstanceOf(KilnException.class)
                .hasMessageContaining("auto_unroll_max_step");
    }
}
