package dev.kiln.lower;

import static dev.kiln.lower.PassChecks.assertSameResults;
import static dev.kiln.lower.PassChecks.buffer;
import static dev.kiln.lower.PassChecks.i32;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.kiln.ir.Buffer;
import dev.kiln.ir.BufferLoad;
import dev.kiln.ir.KilnException;
import dev.kiln.ir.Var;
import dev.kiln.schedule.ScheduleBuilder;
import dev.kiln.tir.For;
import dev.kiln.tir.ForKind;
import dev.kiln.tir.Pragma;
import dev.kiln.tir.PrimFunc;
import dev.kiln.tir.Seq;
import dev.kiln.tir.Stmt;
import dev.kiln.tir.Store;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Explicit and automatic unrolling: golden printouts, the size cap, and unchanged numbers. */
class UnrollLoopsTest {

    @Test
    void anUnrolledLoopBecomesCopiesOfItsBody() {
        ScheduleBuilder s = ScheduleBuilder.on(Dags.scale(8));
        var b = s.stage("B");
        b.split("i", 4);
        b.unroll("i.1");
        PrimFunc f = PassChecks.simplified(s.build());
        PrimFunc g = UnrollLoops.apply(f);
        assertThat(Simplify.apply(g).toString()).isEqualTo("""
                func f(A: float32[8], B: float32[8]) {
                  for i.0 in 0..2 {
                    B[(i.0 * 4)] = ((A[(i.0 * 4)] * 2.0f) + 1.0f)
                    B[((i.0 * 4) + 1)] = ((A[((i.0 * 4) + 1)] * 2.0f) + 1.0f)
                    B[((i.0 * 4) + 2)] = ((A[((i.0 * 4) + 2)] * 2.0f) + 1.0f)
                    B[((i.0 * 4) + 3)] = ((A[((i.0 * 4) + 3)] * 2.0f) + 1.0f)
                  }
                }
                """);
        assertSameResults(f, g);
    }

    @Test
    void aLoopWithANonZeroMinSubstitutesItsValues() {
        Buffer a = buffer("A", 6), b = buffer("B", 6);
        Var i = new Var("i");
        PrimFunc f = new PrimFunc(
                "m",
                List.of(a, b),
                new For(
                        i,
                        i32(3),
                        i32(2),
                        ForKind.UNROLLED,
                        null,
                        new Store(b, List.of(i), new BufferLoad(a, List.of(i.sub(1))))));
        assertThat(UnrollLoops.apply(f).toString()).isEqualTo("""
                func m(A: float32[6], B: float32[6]) {
                  B[3] = A[(3 - 1)]
                  B[4] = A[(4 - 1)]
                }
                """);
        assertSameResults(f, UnrollLoops.apply(f));
    }

    /** pragma N { for i in 0..2 { for j in 0..4 { B[i, j] = A[i, j] }  for k in 0..3 { C[i, k] = A[i, k] } } } */
    private static PrimFunc pragmaNest(long n, ForKind jKind) {
        Buffer a = buffer("A", 2, 4), b = buffer("B", 2, 4), c = buffer("C", 2, 3);
        Var i = new Var("i"), j = new Var("j"), k = new Var("k");
        Stmt body = Seq.of(
                new For(j, i32(0), i32(4), jKind, null, new Store(b, List.of(i, j), new BufferLoad(a, List.of(i, j)))),
                For.serial(k, i32(0), i32(3), new Store(c, List.of(i, k), new BufferLoad(a, List.of(i, k)).add(1.0))));
        return new PrimFunc(
                "p", List.of(a, b, c), new Pragma(Pragma.AUTO_UNROLL_MAX_STEP, n, For.serial(i, i32(0), i32(2), body)));
    }

    @Test
    void autoUnrollUnrollsTheNestsWithinItsStepCount() {
        // j: 4 steps, k: 3 steps, i: 2 * (4 + 3) = 14 steps
        PrimFunc f = pragmaNest(8, ForKind.SERIAL);
        PrimFunc g = UnrollLoops.apply(f);
        assertThat(g.toString()).isEqualTo("""
                func p(A: float32[2, 4], B: float32[2, 4], C: float32[2, 3]) {
                  for i in 0..2 {
                    B[i, 0] = A[i, 0]
                    B[i, 1] = A[i, 1]
                    B[i, 2] = A[i, 2]
                    B[i, 3] = A[i, 3]
                    C[i, 0] = (A[i, 0] + 1.0f)
                    C[i, 1] = (A[i, 1] + 1.0f)
                    C[i, 2] = (A[i, 2] + 1.0f)
                  }
                }
                """);
        assertSameResults(f, g);
        PrimFunc f14 = pragmaNest(14, ForKind.SERIAL);
        PrimFunc whole = UnrollLoops.apply(f14);
        assertThat(whole.toString())
                .doesNotContain("for")
                .doesNotContain("pragma")
                .contains("C[1, 2] = (A[1, 2] + 1.0f)");
        assertSameResults(f14, whole);
    }

    @Test
    void autoUnrollLeavesVectorizedAndParallelLoopsAndTheLoopsAroundThem() {
        PrimFunc g = UnrollLoops.apply(pragmaNest(512, ForKind.VECTORIZED));
        assertThat(g.toString()).isEqualTo("""
                func p(A: float32[2, 4], B: float32[2, 4], C: float32[2, 3]) {
                  for i in 0..2 {
                    vectorized for j in 0..4 {
                      B[i, j] = A[i, j]
                    }
                    C[i, 0] = (A[i, 0] + 1.0f)
                    C[i, 1] = (A[i, 1] + 1.0f)
                    C[i, 2] = (A[i, 2] + 1.0f)
                  }
                }
                """);
        assertThat(UnrollLoops.apply(pragmaNest(512, ForKind.PARALLEL)).toString())
                .contains("parallel for j in 0..4");
    }

    @Test
    void aZeroStepPragmaOnlyGoesAway() {
        PrimFunc g = UnrollLoops.apply(pragmaNest(0, ForKind.SERIAL));
        assertThat(g.toString())
                .doesNotContain("pragma")
                .contains("for i in 0..2")
                .contains("for j in 0..4")
                .contains("for k in 0..3");
    }

    @Test
    void otherPragmasStay() {
        Buffer a = buffer("A", 2), b = buffer("B", 2);
        Var i = new Var("i");
        PrimFunc f = new PrimFunc(
                "o",
                List.of(a, b),
                new Pragma(
                        "something_else",
                        3,
                        For.serial(i, i32(0), i32(2), new Store(b, List.of(i), new BufferLoad(a, List.of(i))))));
        assertThat(UnrollLoops.apply(f)).isSameAs(f);
    }

    @Test
    void theSizeCapKeepsLargeUnrolledLoopsAsLoops() {
        ScheduleBuilder s = ScheduleBuilder.on(Dags.scale(32));
        var b = s.stage("B");
        b.split("i", 8);
        b.unroll("i.0");
        b.unroll("i.1");
        PrimFunc f = PassChecks.simplified(s.build());
        PrimFunc g = UnrollLoops.apply(f, 10);
        // i.1 gives 8 statements (within 10); i.0 would give 32
        assertThat(g.toString()).startsWith("""
                func f(A: float32[32], B: float32[32]) {
                  unrolled for i.0 in 0..4 {
                    B[((i.0 * 8) + 0)] = ((A[((i.0 * 8) + 0)] * 2.0f) + 1.0f)
                """);
        assertSameResults(f, g);
        assertThat(UnrollLoops.apply(f).toString()).doesNotContain("for");
        assertThrows(KilnException.class, () -> UnrollLoops.apply(f, 0));
    }

    @Test
    void unrolledLoopsOfSymbolicExtentStay() {
        Buffer a = buffer("A", 4, 4), b = buffer("B", 4, 4);
        Var i = new Var("i"), j = new Var("j");
        PrimFunc f = new PrimFunc(
                "tri",
                List.of(a, b),
                For.serial(
                        i,
                        i32(0),
                        i32(4),
                        new For(
                                j,
                                i32(0),
                                i.add(1),
                                ForKind.UNROLLED,
                                null,
                                new Store(b, List.of(i, j), new BufferLoad(a, List.of(j, i))))));
        assertThat(UnrollLoops.apply(f)).isSameAs(f);
    }

    @Test
    void tiledSchedulesComputeTheSameNumbers() {
        for (int[] mnk : new int[][] {{15, 10, 7}, {8, 8, 8}, {9, 17, 5}}) {
            PrimFunc f = PassChecks.simplified(Dags.tiledMatmulRelu(Dags.matmulRelu(mnk[0], mnk[1], mnk[2])));
            PrimFunc g = UnrollLoops.apply(f);
            assertThat(g.toString()).doesNotContain("pragma");
            assertSameResults(f, g);
        }
    }
}
