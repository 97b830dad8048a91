package dev.kiln.lower;

import static dev.kiln.lower.PassChecks.assertSameResults;
import static org.assertj.core.api.Assertions.assertThat;

import dev.kiln.schedule.ScheduleBuilder;
import dev.kiln.tir.For;
import dev.kiln.tir.ForKind;
import dev.kiln.tir.IfThenElse;
import dev.kiln.tir.PrimFunc;
import dev.kiln.tir.Stmt;
import dev.kiln.tir.Stmts;
import org.junit.jupiter.api.Test;

/**
 * Guard unswitching: a tail guard under a fused parallel loop becomes one condition at the top of
 * its body with a guard-free copy, numbers unchanged (interpreter, seeded inputs); guards that
 * cannot be hoisted and GPU kernels are left alone.
 */
class UnswitchGuardsTest {

    /** B = A * 2 over 56 x 32, rows tiled by 24 (a tail of 8), the tile loops fused and parallel. */
    private static PrimFunc fusedTail(int rows, int tile) {
        ScheduleBuilder s = ScheduleBuilder.on(Dags.scale2d(rows, 32));
        var b = s.stage("B");
        b.split("i", tile);
        b.split("j", 16);
        b.reorder("i.0", "j.0", "i.1", "j.1");
        b.parallel(b.fuse("i.0", "j.0"));
        b.vectorize("j.1");
        return PassChecks.simplified(s.build());
    }

    private static int ifs(Stmt s) {
        int[] n = {0};
        Stmts.forEachStmt(s, x -> n[0] += x instanceof IfThenElse ? 1 : 0);
        return n[0];
    }

    @Test
    void aTailGuardUnderAFusedLoopIsHoistedToItsBody() {
        PrimFunc f = fusedTail(56, 24);
        PrimFunc g = UnswitchGuards.apply(f);
        For par = (For) g.body();
        assertThat(par.kind()).isEqualTo(ForKind.PARALLEL);
        IfThenElse top = (IfThenElse) par.body();
        assertThat(top.cond().toString()).contains("23").contains("56");
        assertThat(ifs(top.then())).isZero();
        assertThat(ifs(top.otherwise())).isEqualTo(1);
        assertSameResults(f, g);
        // the whole pipeline with the pass: same numbers as the schedule's loops, and the main tiles free of guards
        PrimFunc loops = PassChecks.loops(fusedTailSchedule(56, 24));
        assertSameResults(loops, PassChecks.pipeline(loops));
    }

    private static dev.kiln.schedule.Schedule fusedTailSchedule(int rows, int tile) {
        ScheduleBuilder s = ScheduleBuilder.on(Dags.scale2d(rows, 32));
        var b = s.stage("B");
        b.split("i", tile);
        b.split("j", 16);
        b.reorder("i.0", "j.0", "i.1", "j.1");
        b.parallel(b.fuse("i.0", "j.0"));
        b.vectorize("j.1");
        return s.build();
    }

    @Test
    void sameNumbersOnEveryTailAndTile() {
        for (int rows : new int[] {7, 14, 28, 56, 57}) {
            for (int tile : new int[] {3, 5, 6, 8, 12}) {
                PrimFunc f = fusedTail(rows, tile);
                assertSameResults(f, UnswitchGuards.apply(f), rows * 31L + tile);
            }
        }
    }

    @Test
    void tiledMatmulWithOddSizesKeepsItsNumbers() {
        for (int[] mnk : new int[][] {{30, 20, 12}, {17, 9, 5}, {56, 40, 7}}) {
            PrimFunc f = PassChecks.simplified(Dags.tiledMatmulRelu(Dags.matmulRelu(mnk[0], mnk[1], mnk[2])));
            PrimFunc g = UnswitchGuards.apply(f);
            assertSameResults(f, g, mnk[0]);
            assertSameResults(f, PassChecks.pipeline(f), mnk[1]);
        }
    }

    @Test
    void guardsWithoutInnerLoopsOrOnlyInProvableRangesAreLeftAlone() {
        // a dividing split has no guard; a guard on the loop's own variable only is PartitionLoops' job
        PrimFunc exact = fusedTail(48, 24);
        assertThat(UnswitchGuards.apply(exact).toString()).isEqualTo(exact.toString());
        ScheduleBuilder s = ScheduleBuilder.on(Dags.scale(15));
        s.stage("B").split("i", 4);
        PrimFunc f = PassChecks.simplified(s.build());
        // the guard (i.0 * 4 + i.1) < 15 is hoisted from i.1 to the body of i.0: i.0 * 4 + 3 < 15
        PrimFunc g = UnswitchGuards.apply(f);
        assertThat(((IfThenElse) ((For) g.body()).body()).cond().toString()).isEqualTo("(((i.0 * 4) + 3) < 15)");
        assertSameResults(f, g);
    }

    @Test
    void gpuKernelsAreLeftAlone() {
        ScheduleBuilder s = ScheduleBuilder.on(Dags.scale(15));
        var b = s.stage("B");
        b.split("i", 4);
        b.bind("i.0", "blockIdx.x");
        b.bind("i.1", "threadIdx.x");
        PrimFunc f = PassChecks.loops(s.build());
        assertThat(UnswitchGuards.apply(f)).isSameAs(f);
    }
}
