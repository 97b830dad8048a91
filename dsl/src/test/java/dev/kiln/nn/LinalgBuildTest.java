package dev.kiln.nn;

import static dev.kiln.nn.Errors.assertMessage;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import dev.kiln.ir.DType;
import dev.kiln.te.ComputeDAG;
import dev.kiln.te.ComputeOp;
import dev.kiln.te.Shape;
import dev.kiln.te.Te;
import dev.kiln.te.Tensor;
import org.junit.jupiter.api.Test;

class LinalgBuildTest {
    private static Tensor ph(String n, long... s) {
        return Te.placeholder(n, DType.FLOAT32, s);
    }

    private static ComputeDAG matmulDag(long m, long n, long k, DType t) {
        return ComputeDAG.of(Linalg.matmul(Te.placeholder("A", t, m, k), Te.placeholder("B", t, k, n)));
    }

    @Test
    void matmulShapesForEveryTransposeCombination() {
        assertEquals(Shape.of(3, 5), Linalg.matmul(ph("A", 3, 4), ph("B", 4, 5)).shape());
        assertEquals(
                Shape.of(3, 5),
                Linalg.matmul(ph("A", 4, 3), ph("B", 4, 5), true, false).shape());
        assertEquals(
                Shape.of(3, 5),
                Linalg.matmul(ph("A", 3, 4), ph("B", 5, 4), false, true).shape());
        assertEquals(
                Shape.of(3, 5),
                Linalg.matmul(ph("A", 4, 3), ph("B", 5, 4), true, true).shape());
    }

    @Test
    void matmulFlopsAreTwoMNK() {
        assertEquals(2L * 7 * 5 * 3, matmulDag(7, 5, 3, DType.FLOAT32).flopCount());
        assertEquals(2L * 128 * 64 * 256, matmulDag(128, 64, 256, DType.FLOAT32).flopCount());
        Tensor a = Te.placeholder("A", DType.INT8, 6, 9);
        Tensor b = Te.placeholder("B", DType.INT8, 9, 4);
        assertEquals(
                2L * 6 * 4 * 9,
                ComputeDAG.of(Linalg.matmul(a, b, false, false, DType.INT32)).flopCount());
    }

    @Test
    void workloadKeyIsStructural() {
        String k1 = matmulDag(8, 16, 32, DType.FLOAT32).workloadKey();
        String k2 = matmulDag(8, 16, 32, DType.FLOAT32).workloadKey();
        assertEquals(k1, k2);
        assertNotEquals(k1, matmulDag(8, 16, 33, DType.FLOAT32).workloadKey());
        assertNotEquals(k1, matmulDag(16, 8, 32, DType.FLOAT32).workloadKey());
        assertNotEquals(k1, matmulDag(8, 16, 32, DType.FLOAT64).workloadKey());
        Tensor a = ph("A", 8, 32);
        Tensor bt = ph("B", 16, 32);
        assertNotEquals(k1, ComputeDAG.of(Linalg.matmul(a, bt, false, true)).workloadKey());
    }

    @Test
    void matmulOutDtype() {
        Tensor a = Te.placeholder("A", DType.INT8, 6, 9);
        Tensor b = Te.placeholder("B", DType.INT8, 9, 4);
        assertEquals(DType.INT32, Linalg.matmul(a, b, false, false, DType.INT32).dtype());
        assertEquals(DType.INT8, Linalg.matmul(a, b).dtype());
        assertMessage(() -> Linalg.matmul(a, b, false, false, DType.FLOAT32), "int8", "float32", "'A'", "'B'");
        assertMessage(
                () -> Linalg.matmul(
                        Te.placeholder("X", DType.INT32, 2, 2),
                        Te.placeholder("Y", DType.INT32, 2, 2),
                        false,
                        false,
                        DType.INT16),
                "int32",
                "int16");
    }

    @Test
    void matmulErrors() {
        assertMessage(
                () -> Linalg.matmul(ph("A", 3, 4), ph("B", 5, 6)),
                "matmul",
                "K",
                "axis 1 of tensor 'A' [3, 4]",
                "extent 4",
                "axis 0 of tensor 'B' [5, 6]",
                "extent 5");
        assertMessage(
                () -> Linalg.matmul(ph("A", 4, 3), ph("B", 6, 5), true, true),
                "axis 0 of tensor 'A'",
                "axis 1 of tensor 'B'");
        assertMessage(() -> Linalg.matmul(ph("A", 3, 4, 1), ph("B", 4, 5)), "matmul", "'A'", "rank 3", "2");
        assertMessage(
                () -> Linalg.matmul(ph("A", 3, 4), Te.placeholder("B", DType.FLOAT64, 4, 5)),
                "dtype mismatch",
                "'A'",
                "float32",
                "'B'",
                "float64");
    }

    @Test
    void batchMatmulShapesAndBroadcast() {
        assertEquals(
                Shape.of(2, 3, 5),
                Linalg.batchMatmul(ph("X", 2, 3, 4), ph("Y", 2, 4, 5)).shape());
        assertEquals(
                Shape.of(2, 3, 5),
                Linalg.batchMatmul(ph("X", 2, 4, 3), ph("Y", 2, 5, 4), true, true)
                        .shape());
        assertEquals(
                Shape.of(6, 3, 5),
                Linalg.batchMatmul(ph("X", 1, 3, 4), ph("Y", 6, 4, 5)).shape());
        assertEquals(
                Shape.of(6, 3, 5),
                Linalg.batchMatmul(ph("X", 6, 3, 4), ph("Y", 1, 4, 5)).shape());
        Tensor z = Linalg.batchMatmul(ph("X", 2, 3, 4), ph("Y", 2, 4, 5));
        assertEquals(2L * 2 * 3 * 5 * 4, ComputeDAG.of(z).flopCount());
        assertMessage(
                () -> Linalg.batchMatmul(ph("X", 2, 3, 4), ph("Y", 3, 4, 5)),
                "batch",
                "axis 0 of tensor 'X' [2, 3, 4]",
                "axis 0 of tensor 'Y' [3, 4, 5]");
        assertMessage(
                () -> Linalg.batchMatmul(ph("X", 2, 3, 4), ph("Y", 2, 5, 4)),
                "K",
                "axis 2 of tensor 'X'",
                "axis 1 of tensor 'Y'");
        assertMessage(() -> Linalg.batchMatmul(ph("X", 3, 4), ph("Y", 2, 4, 5)), "'X'", "rank 2");
    }

    @Test
    void denseShapesStagesAndErrors() {
        Tensor d = Linalg.dense(ph("x", 4, 6), ph("w", 3, 6));
        assertEquals(Shape.of(4, 3), d.shape());
        assertEquals("dense", d.name());
        assertEquals(2L * 4 * 3 * 6, ComputeDAG.of(d).flopCount());
        Tensor db = Linalg.dense(ph("x", 4, 6), ph("w", 3, 6), ph("b", 3));
        assertEquals("dense", db.name());
        assertEquals(2L * 4 * 3 * 6 + 4 * 3, ComputeDAG.of(db).flopCount());
        assertEquals(1, ComputeDAG.of(db).intermediates().size());
        assertMessage(() -> Linalg.dense(ph("x", 4, 6), ph("w", 6, 3)), "K", "'x'", "'w'");
        assertMessage(() -> Linalg.dense(ph("x", 4, 6), ph("w", 3, 6), ph("b", 4)), "bias", "'b' [4]", "[3]", "'w'");
        assertMessage(
                () -> Linalg.dense(ph("x", 4, 6), ph("w", 3, 6), Te.placeholder("b", DType.FLOAT64, 3)),
                "bias",
                "'b'",
                "float64",
                "float32");
    }

    @Test
    void normStagesAndFlops() {
        Tensor c = Linalg.norm(ph("A", 2, 5, 7));
        assertEquals(Shape.of(2), c.shape());
        assertEquals("norm", c.name());
        ComputeDAG dag = ComputeDAG.of(c);
        assertEquals("norm_sumsq", dag.intermediates().get(0).name());
        assertEquals(true, dag.intermediates().get(0).isReduction());
        assertEquals(2L * 2 * 5 * 7 + 2, dag.flopCount());
        assertEquals(Shape.of(3, 2), Linalg.norm(ph("A", 3, 2, 5, 7)).shape());
        assertMessage(() -> Linalg.norm(ph("A", 5, 7)), "norm", "'A' [5, 7]", "rank 2", "at least 3");
        assertMessage(() -> Linalg.norm(Te.placeholder("A", DType.INT32, 1, 5, 7)), "norm", "'A'", "int32", "floating");
        assertEquals(
                "batch_matmul",
                ((ComputeOp) Linalg.batchMatmul(ph("X", 1, 2, 2), ph("Y", 1, 2, 2))
                                .op())
                        .tag());
    }
}
