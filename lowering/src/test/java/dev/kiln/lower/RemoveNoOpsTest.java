package dev.kiln.lower;

import static dev.kiln.lower.PassChecks.assertSameResults;
import static dev.kiln.lower.PassChecks.buffer;
import static dev.kiln.lower.PassChecks.i32;
import static org.assertj.core.api.Assertions.assertThat;

import dev.kiln.ir.Buffer;
import dev.kiln.ir.BufferLoad;
import dev.kiln.ir.IntImm;
import dev.kiln.ir.Var;
import dev.kiln.te.Te;
import dev.kiln.tir.Allocate;
import dev.kiln.tir.Barrier;
import dev.kiln.tir.Evaluate;
import dev.kiln.tir.For;
import dev.kiln.tir.IfThenElse;
import dev.kiln.tir.Let;
import dev.kiln.tir.Pragma;
import dev.kiln.tir.PrimFunc;
import dev.kiln.tir.Seq;
import dev.kiln.tir.Stmt;
import dev.kiln.tir.Store;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Removing no-ops: each kind on a golden printout, and the same numbers. */
class RemoveNoOpsTest {

    private static final Buffer A = buffer("A", 6), B = buffer("B", 6);

    private static PrimFunc func(Stmt body) {
        return new PrimFunc("n", List.of(A, B), body);
    }

    private static Store real(Var i) {
        return new Store(B, List.of(i), new BufferLoad(A, List.of(i)).add(1.0));
    }

    @Test
    void everyKindOfNoOpGoesAway() {
        Var i = new Var("i"), j = new Var("j"), k = new Var("k"), x = new Var("x"), y = new Var("y");
        Buffer unused = buffer("U", 4), scratch = buffer("T", 6);
        Stmt body = Seq.of(
                new Allocate(
                        unused,
                        For.serial(
                                i,
                                i32(0),
                                i32(6),
                                Seq.of(
                                        new Store(B, List.of(i), new BufferLoad(B, List.of(i))), // B[i] = B[i]
                                        new Evaluate(i32(3)), // evaluate a constant
                                        new Evaluate(i), // evaluate a variable
                                        new Let(x, i.mul(2), real(i)), // x unused
                                        new Let(
                                                y,
                                                i.add(1),
                                                new Store(
                                                        B, List.of(i), new BufferLoad(A, List.of(y.sub(1))).mul(2.0))),
                                        For.serial(j, i32(0), i32(4), Seq.of(Seq.empty(), Seq.empty())), // empty loop
                                        IfThenElse.of(i.lt(3), Seq.empty()), // empty if
                                        new IfThenElse(i.lt(2), Seq.empty(), real(i)), // empty then
                                        new IfThenElse(i.lt(4), real(i), Seq.empty()), // empty else
                                        new IfThenElse(
                                                IntImm.bool(false),
                                                real(i),
                                                new Evaluate(i32(0))), // constant condition
                                        new Pragma("hint", 1, Seq.empty()), // pragma around nothing
                                        For.serial(k, i32(0), i32(0), real(k))))), // never runs
                new Allocate(
                        scratch,
                        Seq.of(
                                new Store(scratch, List.of(i32(0)), Te.f32(2)),
                                new Store(B, List.of(i32(5)), new BufferLoad(scratch, List.of(i32(0)))))),
                new Barrier());
        PrimFunc f = func(body);
        PrimFunc g = RemoveNoOps.apply(f);
        assertThat(g.toString()).isEqualTo("""
                func n(A: float32[6], B: float32[6]) {
                  for i in 0..6 {
                    B[i] = (A[i] + 1.0f)
                    let y: int32 = (i + 1)
                    B[i] = (A[(y - 1)] * 2.0f)
                    if !(i < 2) {
                      B[i] = (A[i] + 1.0f)
                    }
                    if (i < 4) {
                      B[i] = (A[i] + 1.0f)
                    }
                  }
                  allocate T: float32[6]
                  T[0] = 2.0f
                  B[5] = T[0]
                  barrier()
                }
                """);
        assertSameResults(f, g);
        assertThat(RemoveNoOps.apply(g)).isSameAs(g);
    }

    @Test
    void aStoreOfAnotherElementIsKept() {
        Var i = new Var("i");
        PrimFunc f =
                func(For.serial(i, i32(0), i32(5), new Store(B, List.of(i), new BufferLoad(B, List.of(i.add(1))))));
        assertThat(RemoveNoOps.apply(f)).isSameAs(f);
    }

    @Test
    void aFunctionThatDoesNothingKeepsAnEmptyBody() {
        Var i = new Var("i");
        PrimFunc f = func(For.serial(i, i32(0), i32(6), new Store(A, List.of(i), new BufferLoad(A, List.of(i)))));
        assertThat(RemoveNoOps.apply(f).body()).isEqualTo(Seq.empty());
    }

    @Test
    void viewsCountAsUsesOfTheirAllocation() {
        Var i = new Var("i");
        Buffer t = buffer("T", 2, 3);
        PrimFunc f = FlattenBuffers.apply(func(new Allocate(
                t,
                For.serial(
                        i,
                        i32(0),
                        i32(6),
                        Seq.of(
                                new Store(t, List.of(i.floordiv(3), i.floormod(3)), new BufferLoad(A, List.of(i))),
                                new Store(
                                        B,
                                        List.of(i),
                                        new BufferLoad(t, List.of(i.floordiv(3), i.floormod(3))).mul(4.0)))))));
        assertThat(RemoveNoOps.apply(f)).isSameAs(f);
        assertSameResults(f, RemoveNoOps.apply(f));
    }

    @Test
    void theTiledPipelineComputesTheSameNumbers() {
        for (int[] mnk : new int[][] {{15, 10, 7}, {9, 17, 5}}) {
            PrimFunc f = PassChecks.simplified(Dags.tiledMatmulRelu(Dags.matmulRelu(mnk[0], mnk[1], mnk[2])));
            PrimFunc g = FlattenBuffers.apply(UnrollLoops.apply(PartitionLoops.apply(f)));
            assertSameResults(f, RemoveNoOps.apply(g));
        }
    }
}
