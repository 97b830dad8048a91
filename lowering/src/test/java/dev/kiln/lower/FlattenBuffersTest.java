package dev.kiln.lower;

import static dev.kiln.lower.PassChecks.assertSameResults;
import static dev.kiln.lower.PassChecks.buffer;
import static dev.kiln.lower.PassChecks.i32;
import static org.assertj.core.api.Assertions.assertThat;

import dev.kiln.ir.Buffer;
import dev.kiln.ir.BufferLoad;
import dev.kiln.ir.DType;
import dev.kiln.ir.Exprs;
import dev.kiln.ir.MemoryScope;
import dev.kiln.ir.Var;
import dev.kiln.schedule.Schedule;
import dev.kiln.schedule.ScheduleBuilder;
import dev.kiln.tir.Allocate;
import dev.kiln.tir.For;
import dev.kiln.tir.PrimFunc;
import dev.kiln.tir.Seq;
import dev.kiln.tir.Store;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Storage flatten: golden printouts, views sharing the parameters' memory, and unchanged numbers. */
class FlattenBuffersTest {

    /** T = transpose(A) through a scratch buffer, then B = T. */
    private static PrimFunc transposeThroughScratch() {
        Buffer a = buffer("A", 3, 5), b = buffer("B", 5, 3), t = buffer("T", 5, 3);
        Var i = new Var("i"), j = new Var("j");
        var fill = For.serial(
                i,
                i32(0),
                i32(5),
                For.serial(j, i32(0), i32(3), new Store(t, List.of(i, j), new BufferLoad(a, List.of(j, i)))));
        Var i2 = new Var("i"), j2 = new Var("j");
        var copy = For.serial(
                i2,
                i32(0),
                i32(5),
                For.serial(
                        j2,
                        i32(0),
                        i32(3),
                        new Store(b, List.of(i2, j2), new BufferLoad(t, List.of(i2, j2)).mul(2.0))));
        return new PrimFunc("tr", List.of(a, b), new Allocate(t, Seq.of(fill, copy)));
    }

    @Test
    void accessesGoThroughRankOneViews() {
        PrimFunc f = transposeThroughScratch();
        PrimFunc g = FlattenBuffers.apply(f);
        assertThat(g.toString()).isEqualTo("""
                func tr(A: float32[3, 5], B: float32[5, 3]) {
                  allocate T: float32[15]
                  for i in 0..5 {
                    for j in 0..3 {
                      T[((i * 3) + j)] = A[((j * 5) + i)]
                    }
                  }
                  for i in 0..5 {
                    for j in 0..3 {
                      B[((i * 3) + j)] = (T[((i * 3) + j)] * 2.0f)
                    }
                  }
                }
                """);
        assertSameResults(f, g);
    }

    @Test
    void parametersKeepTheirBuffersAndViewsShareTheirMemory() {
        PrimFunc f = transposeThroughScratch();
        PrimFunc g = FlattenBuffers.apply(f);
        assertThat(g.params()).containsExactlyElementsOf(f.params());
        List<Buffer> accessed = new ArrayList<>();
        dev.kiln.tir.Stmts.forEachStmt(g.body(), s -> {
            if (s instanceof Store st) accessed.add(st.buffer());
            if (s instanceof Allocate al) accessed.add(al.buffer());
        });
        dev.kiln.tir.Stmts.forEachExpr(
                g.body(),
                e -> Exprs.forEach(e, x -> {
                    if (x instanceof BufferLoad l) accessed.add(l.buffer());
                }));
        assertThat(accessed).isNotEmpty().allSatisfy(b -> {
            assertThat(b.isView()).isTrue();
            assertThat(b.rank()).isEqualTo(1);
        });
        Buffer a = f.params().get(0);
        assertThat(accessed).filteredOn(b -> b.base() == a).hasSize(1);
        // one view object per buffer
        assertThat(accessed.stream()
                        .filter(b -> b.name().equals("T"))
                        .distinct()
                        .count())
                .isEqualTo(1);
    }

    @Test
    void flatteningTwiceChangesNothing() {
        PrimFunc g = FlattenBuffers.apply(transposeThroughScratch());
        assertThat(FlattenBuffers.apply(g)).isSameAs(g);
    }

    @Test
    void storageAlignPaddingIsKept() {
        // B (5 x 6) computed at D's row loop, its rows padded to a stride of 9 (9 mod 8 = 1).
        var dag = Dags.scale2d(5, 6);
        dev.kiln.te.Tensor b = dag.outputs().get(0);
        var d = dev.kiln.te.Te.compute(
                "D", dev.kiln.te.Te.shape(5, 6), (i, j) -> b.at(i, j).add(1.0));
        var dag2 = dev.kiln.te.ComputeDAG.of(d);
        ScheduleBuilder s = ScheduleBuilder.on(dag2);
        s.stage("B").storageAlign(0, 8, 1);
        Schedule sch = s.build();
        PrimFunc f = PassChecks.simplified(sch);
        PrimFunc g = FlattenBuffers.apply(f);
        assertThat(g.toString()).isEqualTo("""
                func f(A: float32[5, 6], D: float32[5, 6]) {
                  allocate B: float32[42]
                  for i in 0..5 {
                    for j in 0..6 {
                      B[((i * 9) + j)] = (A[((i * 6) + j)] * 2.0f)
                    }
                  }
                  for i in 0..5 {
                    for j in 0..6 {
                      D[((i * 6) + j)] = (B[((i * 9) + j)] + 1.0f)
                    }
                  }
                }
                """);
        assertSameResults(f, g);
    }

    @Test
    void paddedParameterStridesAreUsed() {
        Buffer a = new Buffer("A", DType.FLOAT32, List.of(i32(4), i32(3)), List.of(i32(5), i32(1)), MemoryScope.GLOBAL);
        Buffer b = buffer("B", 4, 3);
        Var i = new Var("i"), j = new Var("j");
        PrimFunc f = new PrimFunc(
                "pad",
                List.of(a, b),
                For.serial(
                        i,
                        i32(0),
                        i32(4),
                        For.serial(
                                j,
                                i32(0),
                                i32(3),
                                new Store(b, List.of(i, j), new BufferLoad(a, List.of(i, j)).add(1.0)))));
        PrimFunc g = FlattenBuffers.apply(f);
        assertThat(g.toString()).contains("B[((i * 3) + j)] = (A[((i * 5) + j)] + 1.0f)");
        assertSameResults(f, g);
    }

    @Test
    void constantIndicesFoldIntoOneTerm() {
        Buffer a = buffer("A", 3, 5), b = buffer("B", 5);
        Var j = new Var("j");
        PrimFunc f = new PrimFunc(
                "row",
                List.of(a, b),
                For.serial(
                        j,
                        i32(0),
                        i32(5),
                        new Store(
                                b,
                                List.of(j),
                                new BufferLoad(a, List.of(i32(2), j))
                                        .add(new BufferLoad(a, List.of(i32(1), i32(4)))))));
        PrimFunc g = FlattenBuffers.apply(f);
        assertThat(g.toString()).contains("B[j] = (A[(j + 10)] + A[9])");
        assertSameResults(f, g);
    }

    @Test
    void int64IndicesGiveInt64Offsets() {
        Buffer a = buffer("A", 6), b = buffer("B", 2, 3);
        Var i = new Var("i", DType.INT64), j = new Var("j", DType.INT64);
        PrimFunc f = new PrimFunc(
                "wide",
                List.of(a, b),
                new For(
                        i,
                        i32(0).cast(DType.INT64),
                        dev.kiln.ir.IntImm.i64(2),
                        dev.kiln.tir.ForKind.SERIAL,
                        null,
                        new For(
                                j,
                                dev.kiln.ir.IntImm.i64(0),
                                dev.kiln.ir.IntImm.i64(3),
                                dev.kiln.tir.ForKind.SERIAL,
                                null,
                                new Store(
                                        b,
                                        List.of(i, j),
                                        new BufferLoad(a, List.of(i.mul(3L).add(j))).mul(3.0)))));
        PrimFunc g = FlattenBuffers.apply(f);
        assertThat(g.toString()).contains("B[((i * int64(3)) + j)]");
        assertSameResults(f, g);
    }

    @Test
    void tiledScheduleComputesTheSameNumbers() {
        for (int[] mnk : new int[][] {{15, 10, 7}, {8, 8, 8}, {9, 17, 5}}) {
            var sch = Dags.tiledMatmulRelu(Dags.matmulRelu(mnk[0], mnk[1], mnk[2]));
            PrimFunc f = PassChecks.simplified(sch);
            assertSameResults(f, FlattenBuffers.apply(f));
        }
    }
}
