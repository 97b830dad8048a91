package dev.kiln.te;

import static dev.kiln.ir.DType.FLOAT32;
import static dev.kiln.ir.DType.FLOAT64;
import static dev.kiln.ir.DType.INT32;
import static dev.kiln.te.Te.compute;
import static dev.kiln.te.Te.placeholder;
import static dev.kiln.te.Te.reduceAxis;
import static dev.kiln.te.Te.shape;
import static dev.kiln.te.Te.sum;
import static org.assertj.core.api.Assertions.assertThat;

import dev.kiln.ir.DType;
import dev.kiln.ir.Expr;
import dev.kiln.ir.IterVar;
import dev.kiln.ir.Reducer;
import java.util.List;
import org.junit.jupiter.api.Test;

class ComputeDagTest {

    static Tensor matmul(long m, long n, long k, DType t, String a, String b, String c) {
        Tensor A = placeholder(a, t, m, k);
        Tensor B = placeholder(b, t, k, n);
        IterVar r = reduceAxis(k, "k");
        return compute(c, shape(m, n), (i, j) -> sum(r, A.at(i, r).mul(B.at(r, j))));
    }

    @Test
    void topologicalOrderPutsProducersFirst() {
        Tensor A = placeholder("A", FLOAT32, 8);
        Tensor B = compute("B", shape(8), i -> A.at(i).mul(2.0));
        Tensor C = compute("C", shape(8), i -> B.at(i).add(A.at(i)));
        Tensor D = compute("D", shape(8), i -> C.at(i).sub(B.at(i)));
        ComputeDAG dag = ComputeDAG.of(D);
        assertThat(dag.ops().stream().map(Operation::name)).containsExactly("A", "B", "C", "D");
        assertThat(dag.inputs()).containsExactly(A);
        assertThat(dag.intermediates().stream().map(ComputeOp::name)).containsExactly("B", "C");
        assertThat(dag.arguments()).containsExactly(A, D);
    }

    @Test
    void matmulFlopsCountAMultiplyAddAsTwo() {
        assertThat(ComputeDAG.of(matmul(64, 32, 16, FLOAT32, "A", "B", "C")).flopCount())
                .isEqualTo(2L * 64 * 32 * 16);
    }

    @Test
    void flopsFollowTheStatedRules() {
        Tensor A = placeholder("A", FLOAT32, 10, 20);
        // relu-like max: 1 per point; index arithmetic and the select condition count 0
        Tensor B = compute(
                "B",
                shape(10, 20),
                (i, j) -> Te.select(i.lt(5), A.at(i, j.add(0)).max(0.0), A.at(i, j)));
        Tensor C = compute("C", shape(10, 20), (i, j) -> Te.fma(B.at(i, j), B.at(i, j), Te.exp(B.at(i, j))));
        Tensor D = compute("D", shape(10, 20), (i, j) -> C.at(i, j).cast(FLOAT64));
        assertThat(ComputeDAG.of(D).flopCount()).isEqualTo(200L * 1 + 200L * 3 + 0);
    }

    @Test
    void reductionWithConditionCountsEveryDomainPoint() {
        Tensor A = placeholder("A", FLOAT32, 6, 7);
        IterVar k = reduceAxis(7, "k");
        Tensor s = compute("S", shape(6), i -> Te.sum(List.of(k), A.at(i, k).mul(A.at(i, k)), k.lt(3)));
        assertThat(ComputeDAG.of(s).flopCount()).isEqualTo(6L * 7 * 2);
    }

    @Test
    void workloadKeyIsStructural() {
        String k1 = ComputeDAG.of(matmul(64, 32, 16, FLOAT32, "A", "B", "C")).workloadKey();
        String k2 = ComputeDAG.of(matmul(64, 32, 16, FLOAT32, "X", "Y", "Z")).workloadKey();
        String otherShape =
                ComputeDAG.of(matmul(64, 32, 17, FLOAT32, "A", "B", "C")).workloadKey();
        String otherType =
                ComputeDAG.of(matmul(64, 32, 16, FLOAT64, "A", "B", "C")).workloadKey();
        assertThat(k1).isEqualTo(k2).startsWith("kiln-").hasSize(5 + 32);
        assertThat(k1).isNotEqualTo(otherShape).isNotEqualTo(otherType);
    }

    @Test
    void workloadKeySeesConstantsOperatorsAndOperandOrder() {
        Tensor A = placeholder("A", FLOAT32, 8);
        Tensor B = placeholder("B", FLOAT32, 8);
        String base =
                ComputeDAG.of(compute("C", shape(8), i -> A.at(i).sub(B.at(i)))).workloadKey();
        Tensor A2 = placeholder("A", FLOAT32, 8);
        Tensor B2 = placeholder("B", FLOAT32, 8);
        // Inputs are numbered by first use, so B2 - A2 is the same workload as A - B; moving the scale is not.
        String renamed = ComputeDAG.of(compute("C", shape(8), i -> B2.at(i).sub(A2.at(i))))
                .workloadKey();
        assertThat(renamed).isEqualTo(base);
        String swapped = ComputeDAG.of(
                        compute("C", shape(8), i -> A2.at(i).mul(2.0).sub(B2.at(i))))
                .workloadKey();
        String swapped2 = ComputeDAG.of(
                        compute("C", shape(8), i -> A2.at(i).sub(B2.at(i).mul(2.0))))
                .workloadKey();
        String plus = ComputeDAG.of(compute("C", shape(8), i -> A2.at(i).add(B2.at(i))))
                .workloadKey();
        String scaled =
                ComputeDAG.of(compute("C", shape(8), i -> A2.at(i).mul(2.0))).workloadKey();
        String scaled3 =
                ComputeDAG.of(compute("C", shape(8), i -> A2.at(i).mul(3.0))).workloadKey();
        assertThat(List.of(base, swapped, swapped2, plus, scaled, scaled3)).doesNotHaveDuplicates();
    }

    @Test
    void printoutIsReadable() {
        String s = ComputeDAG.of(matmul(4, 5, 6, FLOAT32, "A", "B", "C")).toString();
        assertThat(s).isEqualTo("""
                A = placeholder(float32, [4, 6])
                B = placeholder(float32, [6, 5])
                C[i, j] = sum((A[i, k] * B[k, j]), axis=[k])    # float32 [4, 5], k in [0, 0 + 6)
                """);
    }

    @Test
    void multiValueReductionGivesOneTensorPerValue() {
        Tensor A = placeholder("A", FLOAT32, 3, 9);
        Reducer argmax = Reducer.of(
                "argmax",
                List.of(FLOAT32, INT32),
                (acc, x) -> {
                    Expr better = x.get(0).gt(acc.get(0));
                    return List.of(Te.select(better, x.get(0), acc.get(0)), Te.select(better, x.get(1), acc.get(1)));
                },
                List.of(Reducer.lowest(FLOAT32), Te.i32(-1)));
        IterVar k = reduceAxis(9, "k");
        List<Tensor> outs = Te.computeMulti(
                "argmax", shape(3), ax -> argmax.reduce(List.of(A.at(ax.get(0), k), k), List.of(k), Te.bool(true)));
        assertThat(outs).hasSize(2);
        assertThat(outs.get(0).dtype()).isEqualTo(FLOAT32);
        assertThat(outs.get(1).dtype()).isEqualTo(INT32);
        assertThat(outs.get(0).op()).isSameAs(outs.get(1).op());
        ComputeDAG dag = new ComputeDAG(outs);
        assertThat(dag.ops()).hasSize(2);
    }

    @Test
    void lambdaReductionFormMakesFreshAxes() {
        Tensor A = placeholder("A", FLOAT32, 4, 5, 6);
        Tensor s = compute("S", shape(4), i -> sum(5, 6, (a, b) -> A.at(i, a, b)));
        ComputeOp op = (ComputeOp) s.op();
        assertThat(op.reduceAxes()).hasSize(2);
        assertThat(op.reduceAxes().get(0).extent()).isEqualTo(5);
        assertThat(ComputeDAG.of(s).flopCount()).isEqualTo(4L * 5 * 6);
    }

    @Test
    void everyArityOfIndexLambdaWorks() {
        Tensor t6 = placeholder("T", FLOAT32, 1, 2, 3, 4, 5, 6);
        Tensor c1 = compute(shape(2), i -> t6.at(Te.i32(0), i, i, i, i, i));
        Tensor c3 = compute(shape(2, 3, 4), (i, j, k) -> t6.at(Te.i32(0), i, j, k, k, k));
        Tensor c5 = compute(shape(1, 2, 3, 4, 5), (i, j, k, l, m) -> t6.at(i, j, k, l, m, m));
        Tensor c6 = compute(shape(1, 2, 3, 4, 5, 6), (i, j, k, l, m, n) -> t6.at(i, j, k, l, m, n));
        Tensor cN = Te.computeN("n", shape(1, 2, 3, 4, 5, 6, 7), ax -> t6.at(ax.subList(0, 6)));
        assertThat(List.of(c1.rank(), c3.rank(), c5.rank(), c6.rank(), cN.rank()))
                .containsExactly(1, 3, 5, 6, 7);
    }
}
