package dev.kiln.autoschedule.evolution;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.kiln.autoschedule.SearchTask;
import dev.kiln.autoschedule.Workloads;
import dev.kiln.autoschedule.search.TargetRules;
import dev.kiln.autoschedule.sketch.MultiLevelTilingTensorize;
import dev.kiln.ir.DType;
import dev.kiln.nn.LowPrecision;
import dev.kiln.schedule.TensorIntrinsics;
import dev.kiln.te.ComputeDAG;
import dev.kiln.te.Te;
import dev.kiln.te.Tensor;
import org.junit.jupiter.api.Test;

/**
 * {@link EvolutionarySearchPolicy#defaultModel}: on this CPU a float32 task starts from the shipped pretrained model,
 * a task with a tensorized sketch (an int8 matmul on a CPU with AVX-512 VNNI) from the learned model alone, as the
 * pretrained one never saw such programs.
 */
class DefaultModelTest {
    @Test
    void aFloatTaskStartsFromThePretrainedModel() {
        SearchTask task = SearchTask.thisCpu(Workloads.matmul(256, 256, 256));
        assertThat(EvolutionarySearchPolicy.tensorized(TargetRules.of(task).sketches(task)))
                .isFalse();
        assertThat(EvolutionarySearchPolicy.defaultModel(task, 1).pretrained()).isPresent();
        assertThat(EvolutionarySearchPolicy.defaultModel(task, 1).name()).isEqualTo("gbdt+pretrained");
    }

    @Test
    void aTensorizedTaskStartsFromTheLearnedModelAlone() {
        SearchTask task = SearchTask.thisCpu(int8Matmul());
        assumeTrue(
                MultiLevelTilingTensorize.offered(task.target()).contains(TensorIntrinsics.VNNI_U8S8),
                "this CPU has no AVX-512 VNNI: no tensorized sketch to test");
        assertThat(EvolutionarySearchPolicy.tensorized(TargetRules.of(task).sketches(task)))
                .isTrue();
        assertThat(EvolutionarySearchPolicy.defaultModel(task, 1).pretrained()).isEmpty();
        assertThat(EvolutionarySearchPolicy.defaultModel(task, 1).name()).isEqualTo("gbdt");
    }

    private static ComputeDAG int8Matmul() {
        Tensor x = Te.placeholder("x", DType.UINT8, 256, 256);
        Tensor w = Te.placeholder("w", DType.INT8, 256, 256);
        return ComputeDAG.of(LowPrecision.matmulPacked(x, LowPrecision.packDenseWeight(w)));
    }
}
