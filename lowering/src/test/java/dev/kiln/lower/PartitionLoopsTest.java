package dev.kiln.lower;

import static dev.kiln.lower.PassChecks.assertSameResults;
import static dev.kiln.lower.PassChecks.buffer;
import static dev.kiln.lower.PassChecks.i32;
import static org.assertj.core.api.Assertions.assertThat;

import dev.kiln.ir.Buffer;
import dev.kiln.ir.BufferLoad;
import dev.kiln.ir.Expr;
import dev.kiln.ir.Var;
import dev.kiln.schedule.ScheduleBuilder;
import dev.kiln.tir.For;
import dev.kiln.tir.ForKind;
import dev.kiln.tir.IfThenElse;
import dev.kiln.tir.PrimFunc;
import dev.kiln.tir.Store;
import dev.kiln.tir.ThreadAxis;
import java.util.List;
import java.util.function.Function;
import org.junit.jupiter.api.Test;

/** Loop partition: golden printouts of the parts, loops left alone, and unchanged numbers. */
class PartitionLoopsTest {

    /** {@code for i in 0..n { if (cond(i)) B[i] = A[i] * 2 }} over vectors of length n. */
    private static PrimFunc guarded(int n, ForKind kind, Function<Var, Expr> cond) {
        Buffer a = buffer("A", n), b = buffer("B", n);
        Var i = new Var("i");
        Store st = new Store(b, List.of(i), new BufferLoad(a, List.of(i)).mul(2.0));
        return new PrimFunc(
                "g",
                List.of(a, b),
                new For(
                        i,
                        i32(0),
                        i32(n),
                        kind,
                        kind == ForKind.THREAD_BOUND ? ThreadAxis.THREAD_X : null,
                        IfThenElse.of(cond.apply(i), st)));
    }

    @Test
    void nonDividingSplitLosesItsGuardInTheMainPart() {
        ScheduleBuilder s = ScheduleBuilder.on(Dags.scale(15));
        s.stage("B").split("i", 4);
        PrimFunc f = PassChecks.simplified(s.build());
        PrimFunc g = PartitionLoops.apply(f);
        assertThat(g.toString()).isEqualTo("""
                func f(A: float32[15], B: float32[15]) {
                  for i.0 in 0..3 {
                    for i.1 in 0..4 {
                      B[((i.0 * 4) + i.1)] = ((A[((i.0 * 4) + i.1)] * 2.0f) + 1.0f)
                    }
                  }
                  for i.0 in 3..3 + 1 {
                    for i.1 in 0..3 {
                      B[((i.0 * 4) + i.1)] = ((A[((i.0 * 4) + i.1)] * 2.0f) + 1.0f)
                    }
                    for i.1 in 3..3 + 1 {
                      if (((i.0 * 4) + i.1) < 15) {
                        B[((i.0 * 4) + i.1)] = ((A[((i.0 * 4) + i.1)] * 2.0f) + 1.0f)
                      }
                    }
                  }
                }
                """);
        assertSameResults(f, g);
        // the tail's remaining guard is false: simplify removes that part
        assertThat(Simplify.apply(g).toString()).isEqualTo("""
                func f(A: float32[15], B: float32[15]) {
                  for i.0 in 0..3 {
                    for i.1 in 0..4 {
                      B[((i.0 * 4) + i.1)] = ((A[((i.0 * 4) + i.1)] * 2.0f) + 1.0f)
                    }
                  }
                  for i.1 in 0..3 {
                    B[(i.1 + 12)] = ((A[(i.1 + 12)] * 2.0f) + 1.0f)
                  }
                }
                """);
    }

    @Test
    void headMainAndTail() {
        PrimFunc f = guarded(10, ForKind.SERIAL, i -> i.ge(2).and(i.lt(7)));
        PrimFunc g = PartitionLoops.apply(f);
        assertThat(g.toString()).isEqualTo("""
                func g(A: float32[10], B: float32[10]) {
                  for i in 0..2 {
                    if ((i >= 2) && (i < 7)) {
                      B[i] = (A[i] * 2.0f)
                    }
                  }
                  for i in 2..2 + 5 {
                    B[i] = (A[i] * 2.0f)
                  }
                  for i in 7..7 + 3 {
                    if ((i >= 2) && (i < 7)) {
                      B[i] = (A[i] * 2.0f)
                    }
                  }
                }
                """);
        assertSameResults(f, g);
    }

    @Test
    void negativeAndScaledCoefficients() {
        // 20 - 3 * i > 4  <=>  i <= 5 ; 2 * i + 1 <= 17  <=>  i <= 8
        PrimFunc f = guarded(12, ForKind.SERIAL, i -> i32(20).sub(i.mul(3))
                .gt(4)
                .and(i.mul(2).add(1).le(17)));
        PrimFunc g = PartitionLoops.apply(f);
        assertThat(g.toString())
                .contains("for i in 0..6 {\n    B[i] = (A[i] * 2.0f)\n")
                .contains("for i in 6..6 + 6 {");
        assertSameResults(f, g);
    }

    @Test
    void guardsThatAlwaysHoldAreDroppedWithoutSplitting() {
        PrimFunc f = guarded(8, ForKind.SERIAL, i -> i.lt(100));
        assertThat(PartitionLoops.apply(f).toString()).isEqualTo("""
                func g(A: float32[8], B: float32[8]) {
                  for i in 0..8 {
                    B[i] = (A[i] * 2.0f)
                  }
                }
                """);
    }

    /**
     * A tile of 6 rows in blocks of 2 over 100 rows: the last block (rows 96..107) has one tile of
     * 4 live rows and one dead tile, so no value of {@code i.1} there is guard-free; the block is cut
     * where the guard turns false ({@code i.1 = 1}), and the live tile's row loop then splits into 4
     * guard-free rows and 2 dead ones: no guard is left after simplify.
     */
    @Test
    void aBlockIsCutWhereItsGuardTurnsFalseSoTheTailTileLosesItsGuards() {
        ScheduleBuilder s = ScheduleBuilder.on(Dags.scale(100));
        s.stage("B").split("i", 2, 6);
        PrimFunc f = PassChecks.simplified(s.build());
        assertThat(f.toString()).contains("if (");
        PrimFunc g = PartitionLoops.apply(f);
        assertSameResults(f, g);
        String out = Simplify.apply(g).toString();
        assertThat(out).doesNotContain("if (").contains("for i.2 in 0..4 {");
    }

    @Test
    void nonAffineGuardsLeaveTheLoopAlone() {
        PrimFunc f = guarded(9, ForKind.SERIAL, i -> i.floormod(3).lt(2));
        assertThat(PartitionLoops.apply(f)).isSameAs(f);
        PrimFunc g = guarded(9, ForKind.SERIAL, i -> i.lt(5).and(i.floormod(3).lt(2)));
        assertThat(PartitionLoops.apply(g)).isSameAs(g);
        PrimFunc h = guarded(9, ForKind.SERIAL, i -> i.ne(4));
        assertThat(PartitionLoops.apply(h)).isSameAs(h);
    }

    @Test
    void guardsThatMayWrapAreNotTrusted() {
        // i * 1e9 wraps in int32 for i >= 3: the guard cannot be reasoned about without overflow.
        PrimFunc f = guarded(8, ForKind.SERIAL, i -> i.mul(1_000_000_000L).lt(5));
        assertThat(PartitionLoops.apply(f)).isSameAs(f);
    }

    @Test
    void guardsThatMayDivideByZeroAreKept() {
        Buffer a = buffer("A", 8), b = buffer("B", 8);
        Var d = new Var("d"), i = new Var("i");
        PrimFunc f = new PrimFunc(
                "z",
                List.of(a, b),
                For.serial(
                        d,
                        i32(0),
                        i32(3),
                        For.serial(
                                i,
                                i32(0),
                                i32(8),
                                IfThenElse.of(
                                        i.add(i32(8).floordiv(d)).lt(5),
                                        new Store(b, List.of(i), new BufferLoad(a, List.of(i)))))));
        assertThat(PartitionLoops.apply(f)).isSameAs(f);
    }

    @Test
    void threadBoundLoopsAreNotSplit() {
        PrimFunc f = guarded(8, ForKind.THREAD_BOUND, i -> i.lt(5));
        assertThat(PartitionLoops.apply(f)).isSameAs(f);
    }

    @Test
    void aParallelLoopGivesParallelParts() {
        ScheduleBuilder s = ScheduleBuilder.on(Dags.scale(15));
        var b = s.stage("B");
        b.split("i", 4);
        b.parallel("i.0");
        b.vectorize("i.1");
        PrimFunc f = PassChecks.simplified(s.build());
        PrimFunc g = PartitionLoops.apply(f);
        assertThat(g.toString()).isEqualTo("""
                func f(A: float32[15], B: float32[15]) {
                  parallel for i.0 in 0..3 {
                    vectorized for i.1 in 0..4 {
                      B[((i.0 * 4) + i.1)] = ((A[((i.0 * 4) + i.1)] * 2.0f) + 1.0f)
                    }
                  }
                  parallel for i.0 in 3..3 + 1 {
                    vectorized for i.1 in 0..3 {
                      B[((i.0 * 4) + i.1)] = ((A[((i.0 * 4) + i.1)] * 2.0f) + 1.0f)
                    }
                    vectorized for i.1 in 3..3 + 1 {
                      if (((i.0 * 4) + i.1) < 15) {
                        B[((i.0 * 4) + i.1)] = ((A[((i.0 * 4) + i.1)] * 2.0f) + 1.0f)
                      }
                    }
                  }
                }
                """);
        assertSameResults(f, g);
    }

    @Test
    void guardsBelowInnerLoopsUseTheirRanges() {
        // 2-d tiling, both splits non-dividing; the i guard sits below the j loops.
        ScheduleBuilder s = ScheduleBuilder.on(Dags.scale2d(7, 10));
        var b = s.stage("B");
        b.split("i", 3);
        b.split("j", 4);
        b.reorder("i.0", "j.0", "i.1", "j.1");
        PrimFunc f = PassChecks.simplified(s.build());
        PrimFunc g = PartitionLoops.apply(f);
        long guarded = countIfs(g), plain = countIfs(f);
        assertThat(plain).isEqualTo(1);
        // the main tile (i.0 < 2, j.0 < 2) has no guard left
        assertThat(g.toString()).startsWith("""
                func f(A: float32[7, 10], B: float32[7, 10]) {
                  for i.0 in 0..2 {
                    for j.0 in 0..2 {
                      for i.1 in 0..3 {
                        for j.1 in 0..4 {
                          B[((i.0 * 3) + i.1), ((j.0 * 4) + j.1)] = (A[((i.0 * 3) + i.1), ((j.0 * 4) + j.1)] * 2.0f)
                        }
                      }
                    }
                """);
        assertThat(guarded).isGreaterThan(0);
        assertSameResults(f, g);
        assertSameResults(f, Simplify.apply(g));
    }

    @Test
    void tiledSchedulesComputeTheSameNumbers() {
        for (int[] mnk : new int[][] {{15, 10, 7}, {8, 8, 8}, {9, 17, 5}, {1, 3, 13}}) {
            PrimFunc f = PassChecks.simplified(Dags.tiledMatmulRelu(Dags.matmulRelu(mnk[0], mnk[1], mnk[2])));
            PrimFunc g = PartitionLoops.apply(f);
            assertSameResults(f, g);
            assertSameResults(f, Simplify.apply(g));
        }
    }

    private static long countIfs(PrimFunc f) {
        long[] n = {0};
        dev.kiln.tir.Stmts.forEachStmt(f.body(), s -> {
            if (s instanceof IfThenElse) n[0]++;
        });
        return n[0];
    }
}
