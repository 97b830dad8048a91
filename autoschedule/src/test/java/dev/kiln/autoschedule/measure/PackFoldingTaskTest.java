package dev.kiln.autoschedule.measure;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kiln.autoschedule.HardwareParams;
import dev.kiln.autoschedule.SearchTask;
import dev.kiln.interp.Interpreter;
import dev.kiln.ir.DType;
import dev.kiln.lower.Lowering;
import dev.kiln.nn.LowPrecision;
import dev.kiln.runtime.NDArray;
import dev.kiln.schedule.Schedule;
import dev.kiln.schedule.layout.LayoutRewrite;
import dev.kiln.schedule.layout.PackFolding;
import dev.kiln.target.Target;
import dev.kiln.te.ComputeDAG;
import dev.kiln.te.ComputeOp;
import dev.kiln.te.Te;
import dev.kiln.te.Tensor;
import dev.kiln.tir.PrimFunc;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * A layout-free task whose weight is packed by {@code LowPrecision.packDenseWeight} is tuned and built without the
 * pack stage: {@link SearchTask#withLayoutFree} folds it (key, DAG, the measured program's parameter has the packed
 * shape and no pack loop), the measurer checks the folded program against the interpreter's reference, and the
 * built program, given the original weight through {@link LayoutRewrite.Result#transformArguments}, is exact
 * against plain Java (int8).
 */
class PackFoldingTaskTest {
    static final int M = 8, N = 32, K = 16;

    static ComputeDAG packedDense() {
        Tensor x = Te.placeholder("x", DType.UINT8, M, K);
        Tensor w = Te.placeholder("w", DType.INT8, N, K);
        return ComputeDAG.of(LowPrecision.matmulPacked(x, LowPrecision.packDenseWeight(w)));
    }

    static NDArray full(DType t, long seed, long... shape) {
        NDArray a = NDArray.allocate(t, shape);
        SplittableRandom r = new SplittableRandom(seed);
        for (long i = 0; i < a.numElements(); i++)
            a.setLongFlat(t == DType.UINT8 ? r.nextInt(256) : r.nextInt(256) - 128, i);
        return a;
    }

    @Test
    void theTaskFoldsThePackAndItsProgramIsExact() {
        ComputeDAG dag = packedDense();
        SearchTask t = SearchTask.cpu(dag, HardwareParams.cpu(2, 64, 64)).withLayoutFree(List.of(1));
        assertThat(t.workloadKey()).isEqualTo(dag.workloadKey() + " layout_free=[1] packs_folded=[1]");
        assertThat(t.folds()).singleElement().satisfies(f -> assertThat(f.original())
                .isSameAs(dag.arguments().get(1)));
        assertThat(t.dag().ops()).noneMatch(o -> o instanceof ComputeOp c && PackFolding.PACK_TAG.equals(c.tag()));
        assertThat(t.dag().arguments().get(1).shape().toArray()).containsExactly(N / 16, K / 4, 16, 4);
        assertThat(t.layoutFree()).containsExactly(1);

        // the built program: the original weight packed once by transformArguments
        LayoutRewrite.Result r = t.rewriteLayouts(Schedule.empty(t.dag()));
        assertThat(r.folds()).hasSize(1);
        NDArray x = full(DType.UINT8, 31, M, K);
        NDArray w = full(DType.INT8, 32, N, K);
        List<NDArray> args = r.transformArguments(List.of(x, w, NDArray.allocate(DType.INT32, M, N)));
        PrimFunc f = Lowering.lower("folded", r.schedule());
        assertThat(f.params().get(1).name()).isEqualTo("packed_w");
        Interpreter.run(f, args.toArray(NDArray[]::new));
        for (int i = 0; i < M; i++)
            for (int j = 0; j < N; j++) {
                int acc = 0;
                for (int q = 0; q < K; q++) acc += (int) x.getLong(i, q) * (int) w.getLong(j, q);
                assertThat(args.get(2).getLong(i, j)).as("out[%d, %d]", i, j).isEqualTo(acc);
            }
    }

    @Test
    void theMeasurerRunsTheFoldedProgramAndChecksIt() {
        SearchTask t =
                SearchTask.cpu(packedDense(), HardwareParams.cpu(2, 64, 64)).withLayoutFree(List.of(1));
        LayoutFreeMeasureTest.Recording lowerer = new LayoutFreeMeasureTest.Recording();
        try (LocalMeasurer m = LocalMeasurer.of(Target.cpu(), LayoutFreeMeasureTest.OPTIONS, lowerer)) {
            List<MeasureResult> rs = m.measure(t, List.of(Schedule.empty(t.dag())));
            assertThat(rs)
                    .allSatisfy(res -> assertThat(res.ok()).as(res.toString()).isTrue());
        }
        assertThat(lowerer.weightShapes.getFirst()).containsExactly(N / 16, K / 4, 16, 4);
    }
}
