package dev.kiln.te;

import static dev.kiln.ir.DType.FLOAT32;
import static dev.kiln.ir.DType.FLOAT64;
import static dev.kiln.ir.DType.INT32;
import static org.assertj.core.api.Assertions.assertThat;

import dev.kiln.ir.Cast;
import dev.kiln.ir.DType;
import dev.kiln.ir.Reduce;
import dev.kiln.ir.TensorRead;
import dev.kiln.nn.Linalg;
import dev.kiln.nn.Softmax;
import org.junit.jupiter.api.Test;

class WideAccumulationTest {
    @Test
    void aFloat32SumBecomesAFloat64TotalAndACastUnderTheOldName() {
        Tensor a = Te.placeholder("A", FLOAT32, 8, 5);
        Tensor b = Te.placeholder("B", FLOAT32, 5, 3);
        ComputeDAG dag = ComputeDAG.of(Linalg.matmul(a, b));
        ComputeDAG wide = WideAccumulation.of(dag);

        assertThat(wide.ops().stream().map(Operation::name).toList())
                .containsExactly(
                        "A",
                        "B",
                        dag.outputs().get(0).name() + "_f64",
                        dag.outputs().get(0).name());
        assertThat(wide.arguments().stream().map(Tensor::name).toList())
                .isEqualTo(dag.arguments().stream().map(Tensor::name).toList());
        assertThat(wide.arguments().stream().map(t -> t.shape().dims()).toList())
                .isEqualTo(dag.arguments().stream().map(t -> t.shape().dims()).toList());
        ComputeOp total = (ComputeOp) wide.ops().get(2);
        Reduce r = (Reduce) total.body();
        assertThat(r.dtype()).isEqualTo(FLOAT64);
        assertThat(r.sources().get(0)).isInstanceOf(Cast.class);
        ComputeOp out = (ComputeOp) wide.ops().get(3);
        assertThat(out.body()).isInstanceOf(Cast.class);
        assertThat(((Cast) out.body()).value()).isInstanceOf(TensorRead.class);
        assertThat(out.output(0).dtype()).isEqualTo(FLOAT32);
        assertThat(out.tag()).isEqualTo(((ComputeOp) dag.outputs().get(0).op()).tag());
    }

    @Test
    void readersOfAWidenedSumReadTheNewTensorAndOtherReducersStay() {
        // softmax: a max (kept), an exp (rebuilt: it reads nothing widened, so it is the same op), a sum (widened)
        // and the division that reads it (rebuilt)
        Tensor x = Te.placeholder("X", FLOAT32, 4, 16);
        ComputeDAG dag = ComputeDAG.of(Softmax.softmax(x, 1));
        ComputeDAG wide = WideAccumulation.of(dag);
        long sums = dag.ops().stream()
                .filter(o -> o instanceof ComputeOp c && WideAccumulation.widens(c))
                .count();
        assertThat(sums).isEqualTo(1);
        assertThat(wide.ops()).hasSize(dag.ops().size() + 1);
        for (Operation op : wide.ops()) {
            if (!(op instanceof ComputeOp c)) continue;
            assertThat(WideAccumulation.widens(c)).as(c.name()).isFalse();
            for (Tensor in : c.inputTensors())
                assertThat(wide.ops()).as(c.name() + " reads " + in.name()).contains(in.op());
            if (c.body() instanceof Reduce r && r.reducer().name().equals("max")) {
                assertThat(dag.ops()).as("the max is kept as it was").contains(c);
            }
        }
        assertThat(wide.outputs().get(0).name()).isEqualTo(dag.outputs().get(0).name());
    }

    @Test
    void withoutFloat32SumsTheDagIsReturnedAsItIs() {
        Tensor a = Te.placeholder("A", INT32, 6, 7);
        Tensor b = Te.placeholder("B", FLOAT32, 6, 7);
        ComputeDAG intSum = ComputeDAG.of(Te.compute("S", Shape.of(6), i -> Te.sum(7, k -> a.at(i, k))));
        ComputeDAG floatMax = ComputeDAG.of(Te.compute("M", Shape.of(6), i -> Te.max(7, k -> b.at(i, k))));
        ComputeDAG f64 = ComputeDAG.of(
                Te.compute("D", Shape.of(6), i -> Te.sum(7, k -> b.at(i, k).cast(DType.FLOAT64))));
        assertThat(WideAccumulation.of(intSum)).isSameAs(intSum);
        assertThat(WideAccumulation.of(floatMax)).isSameAs(floatMax);
        assertThat(WideAccumulation.of(f64)).isSameAs(f64);
    }
}
