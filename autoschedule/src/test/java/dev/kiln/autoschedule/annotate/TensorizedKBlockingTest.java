package dev.kiln.autoschedule.annotate;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kiln.autoschedule.InferBound;
import dev.kiln.interp.Interpreter;
import dev.kiln.ir.DType;
import dev.kiln.lower.Lowering;
import dev.kiln.nn.LowPrecision;
import dev.kiln.runtime.NDArray;
import dev.kiln.schedule.LoopState;
import dev.kiln.schedule.Schedule;
import dev.kiln.schedule.ScheduleBuilder;
import dev.kiln.schedule.Step;
import dev.kiln.schedule.TensorIntrinsics;
import dev.kiln.te.ComputeDAG;
import dev.kiln.te.Te;
import dev.kiln.te.Tensor;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * K-blocking applies to a tensorized stage tiled as {@code MultiLevelTilingTensorize} tiles it
 * ("SSRSRS" around the intrinsic's two loops), here with a row tail (6-row tiles over 30 rows): the
 * toggle moves the outer reduction level in front of the level-1 loops, the tensorize check still
 * accepts the program, and both programs are exact against plain Java (interpreter, int8).
 */
class TensorizedKBlockingTest {

    @Test
    void kBlockingTogglesATensorizedStageWithARowTail() {
        int m = 30, n = 64, k = 64;
        Tensor x = Te.placeholder("x", DType.UINT8, m, k);
        Tensor w = Te.placeholder("w", DType.INT8, n, k);
        ComputeDAG dag = ComputeDAG.of(LowPrecision.matmulPacked(x, LowPrecision.packDenseWeight(w)));
        ScheduleBuilder s = ScheduleBuilder.on(dag);
        var c = s.stage("matmul_packed");
        c.split("m", 2, 1, 6);
        c.split("n", 16);
        c.split("n.0", 1, 2, 2);
        c.split("k", 4);
        c.split("k.0", 4);
        c.reorder("m.0", "n.0.0", "m.1", "n.0.1", "k.0.0", "m.2", "n.0.2", "k.0.1", "m.3", "n.0.3", "n.1", "k.1");
        c.tensorize("n.1", TensorIntrinsics.VNNI_U8S8);
        Schedule unblocked = s.build();
        LoopState state = unblocked.replay();
        int id = state.stageIndex("matmul_packed");
        List<KBlocking.Shape> shapes = KBlocking.toggleable(InferBound.apply(state));
        assertThat(shapes)
                .as("toggleable stages")
                .extracting(KBlocking.Shape::stageId)
                .containsExactly(id);
        List<Step> steps = new ArrayList<>(unblocked.steps());
        steps.add(shapes.getFirst().toggle(state));
        Schedule blocked = new Schedule(dag, steps);
        LoopState b = blocked.replay();
        assertThat(KBlocking.isBlocked(b, id)).isTrue();
        assertThat(b.stage(id).tensorized()).isNotNull();

        NDArray xa = NDArray.allocate(DType.UINT8, m, k), wa = NDArray.allocate(DType.INT8, n, k);
        SplittableRandom r = new SplittableRandom(81);
        for (long i = 0; i < xa.numElements(); i++) xa.setLongFlat(r.nextInt(256), i);
        for (long i = 0; i < wa.numElements(); i++) wa.setLongFlat(r.nextInt(256) - 128, i);
        for (Schedule sch : List.of(unblocked, blocked)) {
            NDArray out = NDArray.allocate(DType.INT32, m, n);
            Interpreter.run(Lowering.lower("kb", sch), xa, wa, out);
            for (int i = 0; i < m; i++)
                for (int j = 0; j < n; j++) {
                    long acc = 0;
                    for (int q = 0; q < k; q++) acc += xa.getLong(i, q) * wa.getLong(j, q);
                    assertThat(out.getLong(i, j)).as("out[%d, %d]", i, j).isEqualTo(acc);
                }
        }
    }
}
