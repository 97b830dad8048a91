package dev.kiln.jit;

import static dev.kiln.te.Te.*;
import static org.assertj.core.api.Assertions.assertThat;

import dev.kiln.ir.DType;
import dev.kiln.ir.IterVar;
import dev.kiln.lower.Lowering;
import dev.kiln.schedule.Schedule;
import dev.kiln.schedule.ScheduleBuilder;
import dev.kiln.te.ComputeDAG;
import dev.kiln.te.Tensor;
import dev.kiln.tir.PrimFunc;
import org.junit.jupiter.api.Test;

/**
 * Programs made by hand schedules (tiling, cache_write + compute_at, fuse + parallel, vectorize,
 * auto-unroll, non-dividing splits) through the JIT, against the interpreter.
 */
class ScheduledProgramsTest {
    private static ComputeDAG matmulRelu(int m, int n, int k) {
        Tensor a = placeholder("A", DType.FLOAT32, m, k), b = placeholder("B", DType.FLOAT32, k, n);
        IterVar r = reduceAxis(k, "k");
        Tensor c = compute("C", shape(m, n), (i, j) -> sum(r, a.at(i, r).mul(b.at(r, j))));
        return ComputeDAG.of(compute("D", shape(m, n), (i, j) -> c.at(i, j).max(0.0)));
    }

    @Test
    void tiledParallelVectorizedMatmulWithCacheWrite() {
        ScheduleBuilder s = ScheduleBuilder.on(matmulRelu(64, 96, 40));
        var c = s.stage("C");
        var local = c.cacheWrite("local");
        c.computeInline();
        var d = s.stage("D");
        d.split("i", 4, 2);
        d.split("j", 16);
        d.reorder("i.0", "j.0", "i.1", "i.2", "j.1");
        local.computeAt(d, "j.0");
        local.split("k", 4);
        d.parallel(d.fuse("i.0", "j.0"));
        d.vectorize("j.1");
        local.autoUnrollMaxStep("i", 16);
        Schedule sch = s.build();
        PrimFunc f = Lowering.lower("tiled", sch);
        JitCheck.exact(f, 1);
        try (LlvmKernel k = JitCheck.BACKEND.compile(f, JitCheck.TARGET)) {
            assertThat(k.generatedIr()).contains("<16 x float>").contains("_par0_impl");
            assertThat(k.notes()).isEmpty();
        }
    }

    @Test
    void nonDividingSplitsLeaveGuardsThatTheVectorCodeMasks() {
        ScheduleBuilder s = ScheduleBuilder.on(matmulRelu(13, 37, 11));
        var d = s.stage("D");
        d.split("j", 8); // 37 = 4 x 8 + 5: the last block is guarded
        d.vectorize("j.1");
        d.parallel("i");
        s.stage("C").split("j", 16);
        JitCheck.exact(Lowering.lower("guarded", s.build()), 2);
    }

    /**
     * A register tile with a tail (issue 13): 6 rows of four zmm-wide vectors over 56 rows, the tile
     * loops fused and parallel. The full tiles run unguarded under the condition UnswitchGuards
     * hoists to the fused loop's body, the last tile keeps its guards; numbers as the interpreter's.
     */
    @Test
    void registerTileWithATailUnderAFusedParallelLoop() {
        ScheduleBuilder s = ScheduleBuilder.on(matmulRelu(56, 128, 24));
        var c = s.stage("C");
        var local = c.cacheWrite("local");
        c.computeInline();
        var d = s.stage("D");
        d.split("i", 6); // 56 = 9 x 6 + 2
        d.split("j", 64);
        d.reorder("i.0", "j.0", "i.1", "j.1");
        local.computeAt(d, "j.0");
        local.split("k", 8);
        d.parallel(d.fuse("i.0", "j.0"));
        d.vectorize("j.1");
        local.reorder("k.0", "k.1", "i", "j");
        local.vectorize("j");
        PrimFunc f = Lowering.lower("tail", s.build());
        assertThat(f.toString()).as(f.toString()).contains("} else {");
        JitCheck.exact(f, 3);
    }
}
