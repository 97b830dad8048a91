package dev.kiln.te;

import static dev.kiln.ir.DType.FLOAT32;
import static dev.kiln.ir.DType.INT32;
import static dev.kiln.ir.DType.INT8;
import static org.assertj.core.api.Assertions.assertThat;

import dev.kiln.ir.DType;
import dev.kiln.ir.IterVar;
import dev.kiln.nn.Linalg;
import dev.kiln.nn.Reduction;
import org.junit.jupiter.api.Test;

/** Reductions count their comparisons, and integer computations are rated in GOP/s. */
class OpCountUnitsTest {

    @Test
    void argmaxCountsItsComparisonsOncePerPoint() {
        Tensor x = Te.placeholder("X", FLOAT32, 5, 7);
        ComputeDAG dag = ComputeDAG.of(Reduction.argmax(x, 1));
        // argmax's combiner compares value > value, value == value and index < index: 3 per point
        assertThat(dag.flopCount()).isEqualTo(5L * 7 * 3);
        assertThat(dag.rateUnit()).isEqualTo("GFLOP/s");
    }

    @Test
    void integerArgmaxIsRatedInGop() {
        Tensor x = Te.placeholder("X", INT32, 5, 7);
        ComputeDAG dag = ComputeDAG.of(Reduction.argmax(x, 1));
        assertThat(dag.flopCount()).isPositive();
        assertThat(dag.hasFloatArithmetic()).isFalse();
        assertThat(dag.rateUnit()).isEqualTo("GOP/s");
    }

    @Test
    void maxStillCountsOneAndCustomReducersCountTheirComparisons() {
        Tensor x = Te.placeholder("X", FLOAT32, 5, 7);
        IterVar r = Te.reduceAxis(7, "r");
        assertThat(ComputeDAG.of(Te.compute("M", Te.shape(5), i -> Te.max(r, x.at(i, r))))
                        .flopCount())
                .isEqualTo(5L * 7);
        dev.kiln.ir.Reducer keepLarger = dev.kiln.ir.Reducer.of(
                "larger", FLOAT32, (a, b) -> Te.select(b.gt(a), b, a), dev.kiln.ir.Reducer.lowest(FLOAT32));
        IterVar s = Te.reduceAxis(7, "s");
        Tensor m =
                Te.compute("L", Te.shape(5), i -> keepLarger.reduce(x.at(i, s), java.util.List.of(s), Te.bool(true)));
        assertThat(ComputeDAG.of(m).flopCount()).isEqualTo(5L * 7);
    }

    @Test
    void int8MatmulIsIntegerFloatMatmulIsNot() {
        Tensor a = Te.placeholder("A", INT8, 4, 6);
        Tensor b = Te.placeholder("B", INT8, 6, 5);
        ComputeDAG q = ComputeDAG.of(Linalg.matmul(a, b, false, false, DType.INT32));
        assertThat(q.flopCount()).isEqualTo(2L * 4 * 5 * 6);
        assertThat(q.rateUnit()).isEqualTo("GOP/s");
        Tensor fa = Te.placeholder("A", FLOAT32, 4, 6);
        Tensor fb = Te.placeholder("B", FLOAT32, 6, 5);
        assertThat(ComputeDAG.of(Linalg.matmul(fa, fb, false, false, FLOAT32)).rateUnit())
                .isEqualTo("GFLOP/s");
    }

    @Test
    void aFloatCastInsideAnIntegerInputMakesTheArithmeticFloat() {
        Tensor a = Te.placeholder("A", INT8, 8);
        Tensor dq = Te.compute("DQ", Te.shape(8), i -> Te.cast(FLOAT32, a.at(i)).mul(0.5));
        assertThat(ComputeDAG.of(dq).rateUnit()).isEqualTo("GFLOP/s");
        Tensor add = Te.compute("Add", Te.shape(8), i -> Te.cast(INT32, a.at(i)).add(1L));
        assertThat(ComputeDAG.of(add).rateUnit()).isEqualTo("GOP/s");
    }
}
