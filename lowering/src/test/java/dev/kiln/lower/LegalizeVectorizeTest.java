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
import dev.kiln.tir.Allocate;
import dev.kiln.tir.Evaluate;
import dev.kiln.tir.For;
import dev.kiln.tir.ForKind;
import dev.kiln.tir.IfThenElse;
import dev.kiln.tir.PrimFunc;
import dev.kiln.tir.Seq;
import dev.kiln.tir.Stmt;
import dev.kiln.tir.Store;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BiFunction;
import org.junit.jupiter.api.Test;

/** Vectorize legalisation: hoisted conditions, demotions with their reasons, and unchanged numbers. */
class LegalizeVectorizeTest {

    private static final Buffer A = buffer("A", 5, 4);

    /** {@code for i in 0..5 { vectorized for j in 0..4 { body(i, j) } }} writing B (5 x 4) from A. */
    private static PrimFunc nest(BiFunction<Var, Var, Stmt> body, Buffer b) {
        Var i = new Var("i"), j = new Var("j");
        return new PrimFunc(
                "v",
                List.of(A, b),
                For.serial(i, i32(0), i32(5), new For(j, i32(0), i32(4), ForKind.VECTORIZED, null, body.apply(i, j))));
    }

    private static Store twice(Buffer b, Var i, Expr j) {
        return new Store(b, List.of(i, j), new BufferLoad(A, List.of(i, j)).mul(2.0));
    }

    private static Store thrice(Buffer b, Var i, Var j) {
        return new Store(b, List.of(i, j), new BufferLoad(A, List.of(i, j)).mul(3.0));
    }

    @Test
    void aLegalLoopStaysAsItIs() {
        ScheduleBuilder s = ScheduleBuilder.on(Dags.scale2d(5, 7));
        s.stage("B").vectorize("j");
        PrimFunc f = PassChecks.simplified(s.build());
        LegalizeVectorize.Result r = LegalizeVectorize.run(f);
        assertThat(r.func()).isSameAs(f);
        assertThat(r.demotions()).isEmpty();
    }

    @Test
    void anInvariantConditionIsHoistedOutOfTheLoop() {
        Buffer b = buffer("B", 5, 4);
        PrimFunc f = nest((i, j) -> IfThenElse.of(i.lt(3), twice(b, i, j)), b);
        LegalizeVectorize.Result r = LegalizeVectorize.run(f);
        assertThat(r.func().toString()).isEqualTo("""
                func v(A: float32[5, 4], B: float32[5, 4]) {
                  for i in 0..5 {
                    if (i < 3) {
                      vectorized for j in 0..4 {
                        B[i, j] = (A[i, j] * 2.0f)
                      }
                    }
                  }
                }
                """);
        assertThat(r.demotions()).isEmpty();
        assertSameResults(f, r.func());
    }

    @Test
    void anElseBranchGetsItsOwnLoopVersion() {
        Buffer b = buffer("B", 5, 4);
        PrimFunc f = nest((i, j) -> new IfThenElse(i.lt(3), twice(b, i, j), thrice(b, i, j)), b);
        LegalizeVectorize.Result r = LegalizeVectorize.run(f);
        assertThat(r.func().toString()).isEqualTo("""
                func v(A: float32[5, 4], B: float32[5, 4]) {
                  for i in 0..5 {
                    if (i < 3) {
                      vectorized for j in 0..4 {
                        B[i, j] = (A[i, j] * 2.0f)
                      }
                    } else {
                      vectorized for j in 0..4 {
                        B[i, j] = (A[i, j] * 3.0f)
                      }
                    }
                  }
                }
                """);
        assertSameResults(f, r.func());
    }

    @Test
    void aConditionOnTheLoopVariableDemotesTheLoopAfterHoistingTheRest() {
        Buffer b = buffer("B", 5, 4);
        PrimFunc f = nest((i, j) -> IfThenElse.of(i.lt(3).and(j.lt(2)), twice(b, i, j)), b);
        LegalizeVectorize.Result r = LegalizeVectorize.run(f);
        assertThat(r.func().toString()).isEqualTo("""
                func v(A: float32[5, 4], B: float32[5, 4]) {
                  for i in 0..5 {
                    if (i < 3) {
                      unrolled for j in 0..4 {
                        if (j < 2) {
                          B[i, j] = (A[i, j] * 2.0f)
                        }
                      }
                    }
                  }
                }
                """);
        assertThat(r.demotions()).singleElement().satisfies(d -> {
            assertThat(d.loop()).isEqualTo("j");
            assertThat(d.extent()).isEqualTo(4);
            assertThat(d.to()).isEqualTo(ForKind.UNROLLED);
            assertThat(d.reason()).isEqualTo("it holds an if whose condition (j < 2) depends on the loop");
        });
        assertSameResults(f, r.func());
    }

    @Test
    void aLoadGuardedByAConditionThatStaysIsNotHoisted() {
        // M[i] > 0 is invariant, but && evaluates it only when j < 2 holds: it stays with j < 2.
        Buffer b = buffer("B", 5, 4), m = buffer("M", 5);
        Var i = new Var("i"), j = new Var("j");
        PrimFunc f = new PrimFunc(
                "v",
                List.of(A, m, b),
                For.serial(
                        i,
                        i32(0),
                        i32(5),
                        new For(
                                j,
                                i32(0),
                                i32(4),
                                ForKind.VECTORIZED,
                                null,
                                IfThenElse.of(
                                        j.lt(2)
                                                .and(new BufferLoad(m, List.of(i)).gt(0.0))
                                                .and(i.lt(3)),
                                        twice(b, i, j)))));
        LegalizeVectorize.Result r = LegalizeVectorize.run(f);
        assertThat(r.func().toString()).isEqualTo("""
                func v(A: float32[5, 4], M: float32[5], B: float32[5, 4]) {
                  for i in 0..5 {
                    if (i < 3) {
                      unrolled for j in 0..4 {
                        if ((j < 2) && (M[i] > 0.0f)) {
                          B[i, j] = (A[i, j] * 2.0f)
                        }
                      }
                    }
                  }
                }
                """);
        assertSameResults(f, r.func());
    }

    @Test
    void aVectorizedReductionIsDemoted() {
        // S[i] = sum over k of A[i, k], with k (extent 20) vectorized: every lane writes S[i].
        Buffer a = buffer("A", 3, 20), s = buffer("S", 3);
        Var i = new Var("i"), k = new Var("k");
        Stmt update = new Store(s, List.of(i), new BufferLoad(s, List.of(i)).add(new BufferLoad(a, List.of(i, k))));
        PrimFunc f = new PrimFunc(
                "r",
                List.of(a, s),
                For.serial(
                        i,
                        i32(0),
                        i32(3),
                        Seq.of(
                                new Store(s, List.of(i), dev.kiln.te.Te.f32(0)),
                                new For(k, i32(0), i32(20), ForKind.VECTORIZED, null, update))));
        LegalizeVectorize.Result r = LegalizeVectorize.run(f);
        assertThat(r.func().toString()).contains("    for k in 0..20 {");
        assertThat(r.demotions()).singleElement().satisfies(d -> {
            assertThat(d.to()).isEqualTo(ForKind.SERIAL);
            assertThat(d.reason()).contains("store to 'S'").contains("reduction");
        });
        assertSameResults(f, r.func());
    }

    @Test
    void aStoreWhoseIndexOnlyLooksLikeItVariesIsARaceToo() {
        // floordiv(j, 4) is 0 for j in 0..4: the store index does not vary.
        Buffer b = buffer("B", 5, 4);
        PrimFunc f = nest((i, j) -> new Store(b, List.of(i, j.floordiv(4)), new BufferLoad(A, List.of(i, j))), b);
        LegalizeVectorize.Result r = LegalizeVectorize.run(f);
        assertThat(r.demotions()).singleElement().satisfies(d -> assertThat(d.reason())
                .contains("reduction"));
        assertSameResults(f, r.func());
    }

    @Test
    void aLetBoundIndexIsFollowed() {
        Buffer b = buffer("B", 5, 4);
        Var x = new Var("x"), y = new Var("y");
        PrimFunc ok = nest((i, j) -> new dev.kiln.tir.Let(x, j.add(0), twice2(b, i, x)), b);
        assertThat(LegalizeVectorize.run(ok).demotions()).isEmpty();
        PrimFunc race = nest((i, j) -> new dev.kiln.tir.Let(y, j.sub(j), twice2(b, i, y)), b);
        assertThat(LegalizeVectorize.run(race).demotions()).singleElement().satisfies(d -> assertThat(d.reason())
                .contains("reduction"));
        assertSameResults(race, LegalizeVectorize.apply(race));
    }

    private static Store twice2(Buffer b, Var i, Expr col) {
        return new Store(b, List.of(i, col), new BufferLoad(A, List.of(i, col)).mul(2.0));
    }

    @Test
    void anInnerLoopDemotesTheOuterOne() {
        ScheduleBuilder s = ScheduleBuilder.on(Dags.scale2d(3, 5));
        s.stage("B").vectorize("i");
        PrimFunc f = PassChecks.simplified(s.build());
        LegalizeVectorize.Result r = LegalizeVectorize.run(f);
        assertThat(r.func().toString()).contains("unrolled for i in 0..3 {\n    for j in 0..5 {");
        assertThat(r.demotions()).singleElement().satisfies(d -> assertThat(d.reason())
                .isEqualTo("it holds loop 'j'"));
        assertSameResults(f, r.func());
    }

    @Test
    void statementsABackendCannotVectorizeDemoteTheLoop() {
        Buffer b = buffer("B", 5, 4), t = buffer("T", 1);
        Var i = new Var("i"), j = new Var("j");
        List<Stmt> bodies = List.of(
                new Allocate(
                        t,
                        Seq.of(
                                new Store(t, List.of(i32(0)), new BufferLoad(A, List.of(i, j))),
                                new Store(b, List.of(i, j), new BufferLoad(t, List.of(i32(0)))))),
                Seq.of(new Evaluate(new BufferLoad(A, List.of(i, j))), twice(b, i, j)),
                Seq.of(new dev.kiln.tir.Barrier(), twice(b, i, j)),
                new dev.kiln.tir.Pragma("hint", 1, twice(b, i, j)));
        List<String> reasons = new ArrayList<>();
        for (Stmt body : bodies) {
            PrimFunc f = new PrimFunc(
                    "v",
                    List.of(A, b),
                    For.serial(i, i32(0), i32(5), new For(j, i32(0), i32(4), ForKind.VECTORIZED, null, body)));
            LegalizeVectorize.Result r = LegalizeVectorize.run(f);
            assertThat(r.func().toString()).contains("unrolled for j");
            reasons.add(r.demotions().get(0).reason());
            assertSameResults(f, r.func());
        }
        assertThat(reasons)
                .containsExactly(
                        "it allocates buffer 'T'",
                        "it evaluates A[i, j] for effect",
                        "it holds a barrier",
                        "it holds pragma hint");
    }

    @Test
    void aSymbolicExtentGivesASerialLoop() {
        Buffer b = buffer("B", 5, 4);
        Var i = new Var("i"), j = new Var("j");
        PrimFunc f = new PrimFunc(
                "tri",
                List.of(A, b),
                For.serial(i, i32(0), i32(4), new For(j, i32(0), i.add(1), ForKind.VECTORIZED, null, twice(b, i, j))));
        LegalizeVectorize.Result r = LegalizeVectorize.run(f);
        assertThat(r.func().toString()).contains("  for j in 0..(i + 1) {");
        assertThat(r.demotions()).singleElement().satisfies(d -> {
            assertThat(d.to()).isEqualTo(ForKind.SERIAL);
            assertThat(d.extent()).isEqualTo(-1);
            assertThat(d.reason()).isEqualTo("its extent (i + 1) is not constant");
        });
        assertSameResults(f, r.func());
    }

    @Test
    void aLoopCarriedDependenceDemotesTheLoop() {
        // A'[j + 1] = A'[j] + 1: serially a running sum, vectorized it would read old values.
        Buffer x = buffer("X", 9);
        Var j = new Var("j");
        PrimFunc f = new PrimFunc(
                "scan",
                List.of(x),
                new For(
                        j,
                        i32(0),
                        i32(8),
                        ForKind.VECTORIZED,
                        null,
                        new Store(x, List.of(j.add(1)), new BufferLoad(x, List.of(j)).add(1.0))));
        LegalizeVectorize.Result r = LegalizeVectorize.run(f);
        assertThat(r.demotions()).singleElement().satisfies(d -> assertThat(d.reason())
                .isEqualTo("it writes buffer 'X' and reads it at other indices (a dependence between iterations)"));
        assertSameResults(f, r.func());
        // reading exactly where it writes is fine (a reduction over an outer loop)
        PrimFunc ok = new PrimFunc(
                "acc",
                List.of(x),
                new For(
                        j,
                        i32(0),
                        i32(8),
                        ForKind.VECTORIZED,
                        null,
                        new Store(x, List.of(j), new BufferLoad(x, List.of(j)).add(1.0))));
        assertThat(LegalizeVectorize.run(ok).demotions()).isEmpty();
    }

    @Test
    void aConditionReadingMemoryTheLoopWritesStays() {
        Buffer b = buffer("B", 5, 4);
        PrimFunc f = nest((i, j) -> IfThenElse.of(new BufferLoad(b, List.of(i, i32(0))).gt(0.0), twice(b, i, j)), b);
        LegalizeVectorize.Result r = LegalizeVectorize.run(f);
        assertThat(r.demotions()).singleElement().satisfies(d -> assertThat(d.reason())
                .isEqualTo("it holds an if whose condition (B[i, 0] > 0.0f) reads buffer 'B', which the loop writes"));
        assertSameResults(f, r.func());
    }

    @Test
    void tooManyVersionsAreCapped() {
        Buffer b = buffer("B", 5, 4);
        PrimFunc f = nest(
                (i, j) -> Seq.of(
                        IfThenElse.of(i.lt(1), twice(b, i, j)),
                        IfThenElse.of(i.lt(2), thrice(b, i, j)),
                        IfThenElse.of(i.lt(3), twice(b, i, j)),
                        IfThenElse.of(i.lt(4), thrice(b, i, j))),
                b);
        LegalizeVectorize.Result r = LegalizeVectorize.run(f);
        long vectorized = countLoops(r.func(), ForKind.VECTORIZED), unrolled = countLoops(r.func(), ForKind.UNROLLED);
        assertThat(vectorized + unrolled).isEqualTo(LegalizeVectorize.MAX_VERSIONS);
        assertThat(r.demotions()).hasSize((int) unrolled).isNotEmpty().allSatisfy(d -> assertThat(d.reason())
                .contains("loop versions"));
        assertSameResults(f, r.func());
    }

    @Test
    void aLoopThatNeverRunsGoesAway() {
        Buffer b = buffer("B", 5, 4);
        Var i = new Var("i"), j = new Var("j");
        PrimFunc f = new PrimFunc(
                "z",
                List.of(A, b),
                For.serial(
                        i,
                        i32(0),
                        i32(5),
                        Seq.of(
                                twice(b, i, i32(0)),
                                new For(j, i32(0), i32(0), ForKind.VECTORIZED, null, twice(b, i, j)))));
        assertThat(LegalizeVectorize.apply(f).toString()).doesNotContain("vectorized");
    }

    @Test
    void tiledSchedulesComputeTheSameNumbers() {
        for (int[] mnk : new int[][] {{15, 10, 7}, {8, 8, 8}, {9, 17, 5}}) {
            PrimFunc f = PassChecks.simplified(Dags.tiledMatmulRelu(Dags.matmulRelu(mnk[0], mnk[1], mnk[2])));
            PrimFunc p = Simplify.apply(PartitionLoops.apply(f));
            assertSameResults(f, LegalizeVectorize.apply(f));
            assertSameResults(f, LegalizeVectorize.apply(p));
        }
    }

    private static long countLoops(PrimFunc f, ForKind kind) {
        long[] n = {0};
        dev.kiln.tir.Stmts.forEachStmt(f.body(), s -> {
            if (s instanceof For x && x.kind() == kind) n[0]++;
        });
        return n[0];
    }
}
