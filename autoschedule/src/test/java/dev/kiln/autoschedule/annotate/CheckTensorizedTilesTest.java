package dev.kiln.autoschedule.annotate;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kiln.autoschedule.InferBound;
import dev.kiln.autoschedule.search.TargetRules;
import dev.kiln.ir.DType;
import dev.kiln.nn.LowPrecision;
import dev.kiln.schedule.LoopState;
import dev.kiln.schedule.ScheduleBuilder;
import dev.kiln.schedule.TensorIntrinsics;
import dev.kiln.te.ComputeDAG;
import dev.kiln.te.Te;
import dev.kiln.te.Tensor;
import org.junit.jupiter.api.Test;

/**
 * A tensorized register tile of {@code rows x vectors} accumulators fits when {@code rows * vectors + vectors + 1} is
 * at most the vector registers; larger ones are refused before they are compiled ({@link CheckTensorizedTiles}, the
 * CPU rules' last annotation rule and a check of evolution's children).
 */
class CheckTensorizedTilesTest {
    /** A packed int8 matmul, m tiled by {@code rows}, n by 16 lanes x {@code vectors}, the intrinsic innermost. */
    private static LoopState tiled(int rows, int vectors) {
        Tensor x = Te.placeholder("x", DType.UINT8, 64, 16);
        Tensor w = Te.placeholder("w", DType.INT8, 64, 16);
        ComputeDAG dag = ComputeDAG.of(LowPrecision.matmulPacked(x, LowPrecision.packDenseWeight(w)));
        ScheduleBuilder s = ScheduleBuilder.on(dag);
        var c = s.stage("matmul_packed");
        c.split("m", rows);
        c.split("n", 16);
        c.split("n.0", vectors);
        c.split("k", 4);
        c.reorder("m.0", "n.0.0", "k.0", "m.1", "n.0.1", "n.1", "k.1");
        c.tensorize("n.1", TensorIntrinsics.VNNI_U8S8);
        return InferBound.apply(s.state());
    }

    @Test
    void tilesOverTheRegistersAreRefusedAndFittingOnesKept() {
        assertThat(CheckTensorizedTiles.refusal(tiled(8, 2), 32))
                .as("8 x 2: 16 + 2 + 1")
                .isNull();
        assertThat(CheckTensorizedTiles.refusal(tiled(14, 2), 32))
                .as("14 x 2: 28 + 2 + 1")
                .isNull();
        assertThat(CheckTensorizedTiles.refusal(tiled(16, 2), 32))
                .as("16 x 2: 32 + 2 + 1")
                .contains("32 accumulator vectors")
                .contains("2 operand vectors");
        assertThat(CheckTensorizedTiles.refusal(tiled(8, 2), 16))
                .as("on 16 registers (AVX2)")
                .isNotNull();
        assertThat(CheckTensorizedTiles.refusal(tiled(4, 2), 16)).isNull();
    }

    @Test
    void theCpuRulesEndWithIt() {
        assertThat(TargetRules.cpu().initRules().getLast()).isInstanceOf(CheckTensorizedTiles.class);
    }
}
