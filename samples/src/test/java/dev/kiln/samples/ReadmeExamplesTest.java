package dev.kiln.samples;

import static dev.kiln.ir.DType.FLOAT32;
import static dev.kiln.ir.DType.INT32;
import static dev.kiln.te.Te.bool;
import static dev.kiln.te.Te.cast;
import static dev.kiln.te.Te.compute;
import static dev.kiln.te.Te.computeMulti;
import static dev.kiln.te.Te.names;
import static dev.kiln.te.Te.placeholder;
import static dev.kiln.te.Te.reduceAxis;
import static dev.kiln.te.Te.select;
import static dev.kiln.te.Te.shape;
import static dev.kiln.te.Te.sum;
import static org.assertj.core.api.Assertions.assertThat;

import dev.kiln.interp.Interpreter;
import dev.kiln.ir.Expr;
import dev.kiln.ir.IntImm;
import dev.kiln.ir.IterVar;
import dev.kiln.ir.Reducer;
import dev.kiln.lower.Lowering;
import dev.kiln.runtime.NDArray;
import dev.kiln.schedule.ScheduleBuilder;
import dev.kiln.te.ComputeDAG;
import dev.kiln.te.Tensor;
import dev.kiln.tir.PrimFunc;
import java.util.List;
import org.assertj.core.data.Offset;
import org.junit.jupiter.api.Test;

/**
 * The README's axis-naming and custom-reducer (argmax) examples, run on seeded random inputs and
 * checked against plain Java loops (ReadmeSnippetsTest only compiles and builds them).
 */
class ReadmeExamplesTest {

    @Test
    void theNamedDenseLayerComputesXTimesWTransposed() {
        Tensor x = placeholder("X", FLOAT32, 64, 32);
        Tensor w = placeholder("W", FLOAT32, 16, 32);
        IterVar ci = reduceAxis(32, "ci");
        Tensor y = compute(
                "Y",
                shape(64, 16),
                names("row", "co"),
                (row, co) -> sum(ci, x.at(row, ci).mul(w.at(co, ci))));
        ComputeDAG dense = ComputeDAG.of(y);
        assertThat(dense.toString())
                .contains("Y[row, co] = sum(")
                .contains("X[row, ci]")
                .contains("W[co, ci]");
        ScheduleBuilder s = ScheduleBuilder.on(dense);
        s.stage("Y").split("row", 8);
        assertThat(s.stage("Y").loops().stream().map(ScheduleBuilder.Loop::name))
                .containsExactly("row.0", "row.1", "co", "ci");
        PrimFunc f = Lowering.lower("dense", s.build());
        try (NDArray a = NDArray.random(FLOAT32, 21, 64, 32);
                NDArray b = NDArray.random(FLOAT32, 22, 16, 32);
                NDArray out = NDArray.allocate(FLOAT32, 64, 16)) {
            Interpreter.run(f, a, b, out);
            for (int i = 0; i < 64; i++) {
                for (int j = 0; j < 16; j++) {
                    double ref = 0;
                    for (int k = 0; k < 32; k++) ref += a.getDouble(i, k) * b.getDouble(j, k);
                    // float32 sums of 32 products in [-1, 1): within 1e-5 absolute
                    assertThat(out.getDouble(i, j)).isCloseTo(ref, Offset.offset(1e-5));
                }
            }
        }
    }

    @Test
    void theArgmaxReducerFindsTheFirstLargestScore() {
        Tensor scores = placeholder("S", FLOAT32, 8, 100);
        Reducer argmax = Reducer.of(
                "argmax",
                List.of(FLOAT32, INT32),
                (acc, x) -> {
                    Expr take = x.get(0)
                            .gt(acc.get(0))
                            .or(x.get(0).eq(acc.get(0)).and(x.get(1).lt(acc.get(1))));
                    return List.of(select(take, x.get(0), acc.get(0)), select(take, x.get(1), acc.get(1)));
                },
                List.of(Reducer.lowest(FLOAT32), IntImm.i32(Integer.MAX_VALUE)));
        IterVar c = reduceAxis(100, "c");
        List<Tensor> best = computeMulti(
                "best",
                shape(8),
                names("row"),
                ax -> argmax.reduce(List.of(scores.at(ax.get(0), c), cast(INT32, c)), List.of(c), bool(true)));
        ComputeDAG dag = ComputeDAG.of(best.get(0), best.get(1));
        assertThat(dag.flopCount()).isEqualTo(8L * 100 * 3);
        PrimFunc f = dev.kiln.lower.LowerDefault.lower("argmax", dag);
        try (NDArray s = NDArray.random(FLOAT32, 5, 8, 100);
                NDArray value = NDArray.allocate(FLOAT32, 8);
                NDArray index = NDArray.allocate(INT32, 8)) {
            s.setDouble(s.getDouble(3, 10), 3, 70); // a tie in row 3: the smaller index must win
            Interpreter.run(f, s, value, index);
            for (int r = 0; r < 8; r++) {
                int arg = 0;
                for (int k = 1; k < 100; k++) if (s.getDouble(r, k) > s.getDouble(r, arg)) arg = k;
                assertThat(index.getLong(r)).as("row %d", r).isEqualTo(arg);
                assertThat(value.getDouble(r)).isEqualTo(s.getDouble(r, arg));
            }
        }
    }
}
