package dev.kiln.te;

import static dev.kiln.ir.DType.FLOAT32;
import static dev.kiln.te.Te.compute;
import static dev.kiln.te.Te.computeN;
import static dev.kiln.te.Te.names;
import static dev.kiln.te.Te.placeholder;
import static dev.kiln.te.Te.reduceAxis;
import static dev.kiln.te.Te.shape;
import static dev.kiln.te.Te.sum;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.kiln.ir.IterVar;
import dev.kiln.ir.KilnException;
import dev.kiln.ir.Reduce;
import dev.kiln.ir.TensorRead;
import dev.kiln.nn.Linalg;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Spatial axes named by the user, and how clashes between axis names are settled. */
class AxisNamingTest {

    private static List<String> axisNames(Tensor t) {
        ComputeOp op = (ComputeOp) t.op();
        List<String> out =
                new java.util.ArrayList<>(op.axes().stream().map(IterVar::name).toList());
        out.addAll(op.reduceAxes().stream().map(IterVar::name).toList());
        return out;
    }

    @Test
    void namedAxesReachTheOpAndThePrintedProgram() {
        Tensor a = placeholder("A", FLOAT32, 4, 6);
        Tensor b = placeholder("B", FLOAT32, 6, 5);
        IterVar k = reduceAxis(6, "k");
        Tensor c = compute(
                "C",
                shape(4, 5),
                names("row", "col"),
                (row, col) -> sum(k, a.at(row, k).mul(b.at(k, col))));
        assertThat(axisNames(c)).containsExactly("row", "col", "k");
        assertThat(ComputeDAG.of(c).toString())
                .contains("C[row, col] = sum(")
                .contains("A[row, k]")
                .contains("B[k, col]");
    }

    @Test
    void everyArityAndTheGenericFormsTakeNames() {
        Tensor a = placeholder("A", FLOAT32, 2, 2, 2, 2, 2, 2);
        Tensor t1 = compute("T1", shape(2), names("a"), x -> a.at(x, x, x, x, x, x));
        Tensor t3 = compute("T3", shape(2, 2, 2), names("a", "b", "c"), (x, y, z) -> a.at(x, y, z, x, y, z));
        Tensor t6 = compute(
                "T6",
                shape(2, 2, 2, 2, 2, 2),
                names("n", "c", "d", "h", "w", "v"),
                (p, q, r, s, t, u) -> a.at(p, q, r, s, t, u));
        Tensor g = computeN(
                "G",
                "tag",
                shape(2, 2),
                names("y", "x"),
                ax -> a.at(ax.get(0), ax.get(1), ax.get(0), ax.get(1), ax.get(0), ax.get(1)));
        assertThat(axisNames(t1)).containsExactly("a");
        assertThat(axisNames(t3)).containsExactly("a", "b", "c");
        assertThat(axisNames(t6)).containsExactly("n", "c", "d", "h", "w", "v");
        assertThat(axisNames(g)).containsExactly("y", "x");
    }

    @Test
    void aReduceAxisNamedLikeANamedSpatialAxisIsRejectedNamingBoth() {
        Tensor a = placeholder("A", FLOAT32, 4, 6);
        IterVar k = reduceAxis(6, "row");
        KilnException e = assertThrows(
                KilnException.class, () -> compute("C", shape(4), names("row"), row -> sum(k, a.at(row, k))));
        assertThat(e.getMessage())
                .contains("compute 'C'")
                .contains("reduce axis 'row'")
                .contains("spatial axis 'row'")
                .contains("axis 0");
    }

    @Test
    void twoReduceAxesOfOneNameAreRejected() {
        Tensor a = placeholder("A", FLOAT32, 4, 6);
        IterVar k1 = reduceAxis(4, "k");
        IterVar k2 = reduceAxis(6, "k");
        KilnException e = assertThrows(
                KilnException.class, () -> compute("S", shape(1), i -> sum(List.of(k1, k2), a.at(k1, k2))));
        assertThat(e.getMessage()).contains("compute 'S'").contains("two reduce axes are named 'k'");
    }

    @Test
    void badNameListsAreRejected() {
        assertThat(assertThrows(KilnException.class, () -> names("i", "j", "i")).getMessage())
                .contains("axes 0 and 2")
                .contains("'i'");
        assertThat(assertThrows(KilnException.class, () -> names("i.0")).getMessage())
                .contains("'i.0'")
                .contains("identifier");
        assertThat(assertThrows(KilnException.class, () -> names("i", null)).getMessage())
                .contains("axis 1")
                .contains("null");
        Tensor a = placeholder("A", FLOAT32, 4, 6);
        assertThat(assertThrows(KilnException.class, () -> compute("C", shape(4, 6), names("i"), (i, j) -> a.at(i, j)))
                        .getMessage())
                .contains("compute 'C'")
                .contains("1 axis name(s)")
                .contains("rank 2");
    }

    @Test
    void defaultNamesGiveWayToAReduceAxisOfTheSameName() {
        // a batch matmul [b, m, n] with reduce axis 'k': the third default spatial name would be 'k' too
        Tensor a = placeholder("A", FLOAT32, 2, 3, 4);
        Tensor b = placeholder("B", FLOAT32, 2, 4, 5);
        IterVar k = reduceAxis(4, "k");
        Tensor c =
                compute("C", shape(2, 3, 5), (x, y, z) -> sum(k, a.at(x, y, k).mul(b.at(x, k, z))));
        assertThat(axisNames(c)).containsExactly("i", "j", "l", "k");
        // the body reads the renamed axis, not the one the lambda first received
        ComputeOp op = (ComputeOp) c.op();
        TensorRead readB = (TensorRead)
                ((dev.kiln.ir.Binary) ((Reduce) op.body()).sources().get(0)).b();
        assertThat(readB.indices().get(2)).isSameAs(op.axes().get(2));
        assertThat(ComputeDAG.of(c).toString()).contains("C[i, j, l]").contains("B[i, k, l]");
    }

    @Test
    void theLibrarysNormNoLongerMakesTwoAxesOfOneName() {
        Tensor a = placeholder("A", FLOAT32, 3, 4, 5);
        Tensor n = Linalg.norm(a);
        ComputeOp sumsq = (ComputeOp) n.op().inputTensors().get(0).op();
        List<String> all = axisNames(sumsq.output(0));
        assertThat(all).doesNotHaveDuplicates().contains("i", "j");
    }
}
