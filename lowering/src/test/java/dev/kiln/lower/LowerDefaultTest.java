package dev.kiln.lower;

import static dev.kiln.ir.DType.FLOAT32;
import static dev.kiln.ir.DType.INT32;
import static dev.kiln.te.Te.compute;
import static dev.kiln.te.Te.placeholder;
import static dev.kiln.te.Te.reduceAxis;
import static dev.kiln.te.Te.shape;
import static dev.kiln.te.Te.sum;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.kiln.ir.Expr;
import dev.kiln.ir.IterVar;
import dev.kiln.ir.KilnException;
import dev.kiln.ir.Reducer;
import dev.kiln.te.ComputeDAG;
import dev.kiln.te.Te;
import dev.kiln.te.Tensor;
import dev.kiln.tir.PrimFunc;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The default lowering's structure, checked on its printout (golden text). */
class LowerDefaultTest {

    @Test
    void matmulWithAnIntermediate() {
        Tensor A = placeholder("A", FLOAT32, 4, 6);
        Tensor B = placeholder("B", FLOAT32, 6, 5);
        IterVar k = reduceAxis(6, "k");
        Tensor C = compute("C", shape(4, 5), (i, j) -> sum(k, A.at(i, k).mul(B.at(k, j))));
        Tensor D = compute("D", shape(4, 5), (i, j) -> C.at(i, j).max(0.0));
        PrimFunc f = LowerDefault.lower("mm_relu", ComputeDAG.of(D));
        assertThat(f.toString()).isEqualTo("""
                func mm_relu(A: float32[4, 6], B: float32[6, 5], D: float32[4, 5]) {
                  allocate C: float32[4, 5]
                  for i in 0..4 {
                    for j in 0..5 {
                      C[i, j] = 0.0f
                      for k in 0..6 {
                        C[i, j] = (C[i, j] + (A[i, k] * B[k, j]))
                      }
                    }
                  }
                  for i in 0..4 {
                    for j in 0..5 {
                      D[i, j] = max(C[i, j], 0.0f)
                    }
                  }
                }
                """);
    }

    @Test
    void conditionalReductionAndOffsetAxis() {
        Tensor A = placeholder("A", FLOAT32, 8);
        IterVar k = reduceAxis(2, 5, "k");
        Tensor S = compute("S", shape(1), i -> Te.sum(List.of(k), A.at(k), k.lt(6)));
        assertThat(LowerDefault.lower("s", ComputeDAG.of(S)).toString()).isEqualTo("""
                func s(A: float32[8], S: float32[1]) {
                  for i in 0..1 {
                    S[i] = 0.0f
                    for k in 0..5 {
                      if ((k + 2) < 6) {
                        S[i] = (S[i] + A[(k + 2)])
                      }
                    }
                  }
                }
                """);
    }

    @Test
    void multiValueReductionUsesLets() {
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
                "am", shape(3), ax -> argmax.reduce(List.of(A.at(ax.get(0), k), k), List.of(k), Te.bool(true)));
        String s = LowerDefault.lower("argmax", new ComputeDAG(outs)).toString();
        assertThat(s)
                .contains("am.v0[i] = -inff")
                .contains("am.v1[i] = -1")
                .contains("let x0: float32 = am.v0[i]")
                .contains("let y1: int32 = k")
                .contains("am.v1[i] = am.v1_new");
    }

    @Test
    void argumentsMustCoverEveryPlaceholder() {
        Tensor A = placeholder("A", FLOAT32, 4);
        Tensor B = placeholder("B", FLOAT32, 4);
        Tensor C = compute("C", shape(4), i -> A.at(i).add(B.at(i)));
        String m = assertThrows(KilnException.class, () -> LowerDefault.lower("f", List.of(A, C)))
                .getMessage();
        assertThat(m).contains("placeholder 'B'");
        assertThat(LowerDefault.lower("f", List.of(B, A, C)).params().stream().map(Object::toString))
                .containsExactly("B", "A", "C");
    }

    @Test
    void duplicateNamesGetDistinctBuffers() {
        Tensor A = placeholder("T", FLOAT32, 4);
        Tensor B = compute("T", shape(4), i -> A.at(i).mul(2.0));
        Tensor C = compute("T", shape(4), i -> B.at(i).add(1.0));
        PrimFunc f = LowerDefault.lower("f", ComputeDAG.of(C));
        assertThat(f.params().stream().map(Object::toString)).containsExactly("T", "T_1");
        assertThat(f.toString()).contains("allocate T_2: float32[4]");
    }
}
