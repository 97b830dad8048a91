package dev.kiln.jit.jvm;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kiln.ir.DType;
import dev.kiln.ir.IterVar;
import dev.kiln.lower.Lowering;
import dev.kiln.schedule.ScheduleBuilder;
import dev.kiln.te.ComputeDAG;
import dev.kiln.te.Te;
import dev.kiln.te.Tensor;
import dev.kiln.tir.PrimFunc;
import org.junit.jupiter.api.Test;

/**
 * {@link RegisterTiles}: a tile's row loop left serial around its vectorized chunks (as Ansor's multi-level
 * tiling leaves it) is unrolled, so the accumulators are kept in locals across the reduction loop; the
 * kernel matches the interpreter bit for bit with and without it.
 */
class RegisterTilesTest {
    private static final int W = Math.max(2, Math.min(16, JvmCheck.TARGET.vectorBits() / 32));

    /** C = A x B (n x n), C.local tiles of 4 rows x 2 vectors under {@code for k.1}, the rows a serial loop. */
    static PrimFunc tunedLikeGemm(int n) {
        Tensor a = Te.placeholder("A", DType.FLOAT32, n, n), b = Te.placeholder("B", DType.FLOAT32, n, n);
        IterVar k = Te.reduceAxis(n, "k");
        ComputeDAG dag = ComputeDAG.of(
                Te.compute("C", Te.shape(n, n), (i, j) -> Te.sum(k, a.at(i, k).mul(b.at(k, j)))));
        ScheduleBuilder s = ScheduleBuilder.on(dag);
        var c = s.stage("C");
        var local = c.cacheWrite("local");
        c.split("i", 8);
        c.split("j", 2 * W);
        c.reorder("i.0", "j.0", "i.1", "j.1");
        local.computeAt(c, "j.0");
        local.split("i", 4);
        local.split("k", 4);
        local.reorder("i.0", "k.0", "k.1", "i.1", "j");
        local.vectorize("j");
        c.vectorize("j.1");
        return Lowering.lower("tiles", s.build());
    }

    @Test
    void aSerialRowLoopAroundVectorChunksIsUnrolledAndItsAccumulatorsPromoted() {
        PrimFunc f = tunedLikeGemm(4 * W);
        JvmBackend.clearCache();
        JvmKernel k = JvmCheck.exact(f, 1);
        assertThat(k.promotions()).anyMatch(p -> p.endsWith("keeps 8 vector(s) of 'C.local' in locals"));
        System.setProperty("kiln.jvm.unrollTiles", "false");
        try {
            JvmBackend.clearCache();
            assertThat(JvmCheck.exact(f, 2).promotions()).noneMatch(p -> p.contains("'C.local'"));
        } finally {
            System.clearProperty("kiln.jvm.unrollTiles");
            JvmBackend.clearCache();
        }
    }

    @Test
    void aTileOfMoreVectorsThanRegistersStaysALoop() {
        // 16 rows of 2 vectors: 32 accumulators, more than Promotion.maxVectors
        Tensor a = Te.placeholder("A", DType.FLOAT32, 16, 8), b = Te.placeholder("B", DType.FLOAT32, 8, 2 * W);
        IterVar k = Te.reduceAxis(8, "k");
        ComputeDAG dag = ComputeDAG.of(Te.compute(
                "C", Te.shape(16, 2 * W), (i, j) -> Te.sum(k, a.at(i, k).mul(b.at(k, j)))));
        ScheduleBuilder s = ScheduleBuilder.on(dag);
        var c = s.stage("C");
        c.reorder("k", "i", "j");
        c.vectorize("j");
        JvmBackend.clearCache();
        JvmKernel kernel = JvmCheck.exact(Lowering.lower("big", s.build()), 3);
        assertThat(kernel.promotions()).noneMatch(p -> p.contains("'C'"));
    }
}
