package dev.kiln.arith;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kiln.ir.Buffer;
import dev.kiln.ir.BufferLoad;
import dev.kiln.ir.DType;
import dev.kiln.ir.Expr;
import dev.kiln.ir.IntImm;
import dev.kiln.ir.MemoryScope;
import dev.kiln.ir.Var;
import dev.kiln.tir.Allocate;
import dev.kiln.tir.Evaluate;
import dev.kiln.tir.For;
import dev.kiln.tir.ForKind;
import dev.kiln.tir.IfThenElse;
import dev.kiln.tir.Let;
import dev.kiln.tir.PrimFunc;
import dev.kiln.tir.Seq;
import dev.kiln.tir.Stmt;
import dev.kiln.tir.StmtPrinter;
import dev.kiln.tir.Store;
import dev.kiln.tir.ThreadAxis;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The statement rules: exact result, rule fired, and the same memory contents when run. */
class StmtSimplifierTest {
    private final Buffer a = Buffer.rowMajor("A", DType.INT32, List.of(512L), MemoryScope.GLOBAL);
    private final Buffer b = Buffer.rowMajor("B", DType.INT32, List.of(64L, 8L), MemoryScope.GLOBAL);
    private final Var i = new Var("i"), j = new Var("j"), i0 = new Var("i.0"), i1 = new Var("i.1");
    private static final Expr TRUE = IntImm.bool(true), FALSE = IntImm.bool(false);

    private static Expr c(long v) {
        return IntImm.i32(v);
    }

    private Stmt storeA(Expr idx, Expr v) {
        return new Store(a, List.of(idx), v);
    }

    private Stmt storeB(Expr r, Expr col, Expr v) {
        return new Store(b, List.of(r, col), v);
    }

    private static Stmt loop(Var v, long extent, Stmt body) {
        return For.serial(v, c(0), c(extent), body);
    }

    /** Simplifies, checks the exact result and the fired rule, and runs both versions on the same inputs. */
    private Stmt check(String rule, Stmt in, Stmt expected) {
        List<String> fired = new ArrayList<>();
        Stmt out = new Simplifier().withTrace(fired::add).simplify(in);
        assertEquals(StmtPrinter.print(expected), StmtPrinter.print(out));
        assertEquals(expected, out);
        assertTrue(fired.contains(rule), rule + " did not fire; fired " + fired);
        assertSameMemory(in, out);
        return out;
    }

    private void assertSameMemory(Stmt in, Stmt out) {
        var want = TestExec.run(new PrimFunc("f", List.of(a, b), in), 7);
        var got = TestExec.run(new PrimFunc("f", List.of(a, b), out), 7);
        assertArrayEquals(want.get(a), got.get(a));
        assertArrayEquals(want.get(b), got.get(b));
    }

    @Test
    void ifConst() {
        Stmt s1 = storeA(c(0), c(1)), s2 = storeA(c(1), c(2));
        check("if-const", new IfThenElse(TRUE, s1, s2), s1);
        check("if-const", new IfThenElse(c(3).lt(c(2)), s1, s2), s2);
        check("if-const", IfThenElse.of(FALSE, s1), Seq.empty());
    }

    @Test
    void ifDecidedByTheLoopRange() {
        Stmt body = storeA(i, i);
        check("if-const", loop(i, 64, IfThenElse.of(i.lt(100), body)), loop(i, 64, body));
    }

    @Test
    void loopExtentZero() {
        Stmt s = storeA(i, i);
        check("loop-extent-zero", loop(i, 0, s), Seq.empty());
        check(
                "loop-extent-zero",
                Seq.of(loop(j, 8, For.serial(i, c(0), j.sub(j), s)), storeA(c(3), c(4))),
                storeA(c(3), c(4)));
    }

    @Test
    void loopExtentOneSubstitutesAConstantOrVariableMin() {
        check("loop-extent-one", loop(i, 1, storeA(i, i.mul(2))), storeA(c(0), c(0)));
        check("loop-extent-one", For.serial(i, c(5), c(1), storeA(i.add(1), i)), storeA(c(6), c(5)));
        check("loop-extent-one", loop(j, 8, For.serial(i, j, c(1), storeA(i, i))), loop(j, 8, storeA(j, j)));
    }

    @Test
    void loopExtentOneBindsAnExpressionMinWithALet() {
        Stmt in = loop(j, 8, For.serial(i, j.mul(2), c(1), storeA(i, i)));
        check("loop-extent-one", in, loop(j, 8, new Let(i, j.mul(2), storeA(i, i))));
    }

    @Test
    void threadBoundLoopOfExtentOneStaysButItsVariableFolds() {
        Stmt in = new For(i, c(0), c(1), ForKind.THREAD_BOUND, ThreadAxis.THREAD_X, storeA(i.add(3), i));
        Stmt out = check(
                "var-by-range",
                in,
                new For(i, c(0), c(1), ForKind.THREAD_BOUND, ThreadAxis.THREAD_X, storeA(c(3), c(0))));
        assertTrue(out instanceof For);
    }

    @Test
    void seqFlattenAndEmpty() {
        Stmt s1 = storeA(c(0), c(1)), s2 = storeA(c(1), c(2)), s3 = storeA(c(2), c(3));
        check("seq-flatten", new Seq(List.of(new Seq(List.of(s1, s2)), Seq.empty(), s3)), new Seq(List.of(s1, s2, s3)));
        check("seq-single", new Seq(List.of(s1)), s1);
        check("seq-flatten", new Seq(List.of(Seq.empty(), Seq.empty())), Seq.empty());
    }

    @Test
    void tiledIndicesSimplifyWithTheLoopRanges() {
        Expr flat = i0.mul(8).add(i1);
        Stmt in = loop(
                i0,
                64,
                loop(
                        i1,
                        8,
                        IfThenElse.of(
                                flat.lt(512),
                                storeB(flat.floordiv(8), flat.floormod(8), new BufferLoad(a, List.of(flat)).add(1)))));
        Stmt want = loop(i0, 64, loop(i1, 8, storeB(i0, i1, new BufferLoad(a, List.of(flat)).add(1))));
        check("div-split-sum", in, want);
    }

    @Test
    void ifNarrowsTheRangesOfItsBranches() {
        Stmt in = loop(
                i,
                100,
                new IfThenElse(
                        i.lt(10),
                        storeA(i.floordiv(16), i),
                        storeA(i.floordiv(128).add(1), i)));
        check("div-by-bounds", in, loop(i, 100, new IfThenElse(i.lt(10), storeA(c(0), i), storeA(c(1), i))));
        Stmt both = loop(
                i, 100, IfThenElse.of(i.ge(10).and(i.lt(20)), storeA(i.sub(10).floordiv(16), i)));
        check("div-by-bounds", both, loop(i, 100, IfThenElse.of(i.ge(10).and(i.lt(20)), storeA(c(0), i))));
    }

    @Test
    void letBoundIntegersHaveRanges() {
        Var k = new Var("k");
        Stmt in = loop(i, 64, new Let(k, i.floormod(8), storeA(k.floordiv(8).add(k), k)));
        check("div-by-bounds", in, loop(i, 64, new Let(k, i.floormod(8), storeA(k, k))));
    }

    @Test
    void constructsAroundNothingVanish() {
        Buffer tmp = Buffer.rowMajor("T", DType.INT32, List.of(4L), MemoryScope.LOCAL);
        check("allocate-empty", new Allocate(tmp, loop(i, 0, new Store(tmp, List.of(i), i))), Seq.empty());
        check("loop-empty-body", loop(i, 8, IfThenElse.of(i.gt(20), storeA(i, i))), Seq.empty());
        check("evaluate-const", new Evaluate(c(3).add(4)), Seq.empty());
        check("let-empty-body", new Let(j, c(2), Seq.empty()), Seq.empty());
        check("if-empty", loop(j, 8, loop(i, 8, IfThenElse.of(i.lt(j), Seq.empty()))), Seq.empty());
    }

    @Test
    void emptyThenBranchNegatesTheCondition() {
        Stmt s = storeA(i, j);
        Stmt in = loop(j, 8, loop(i, 8, new IfThenElse(i.lt(j), Seq.empty(), s)));
        check("if-empty-then", in, loop(j, 8, loop(i, 8, IfThenElse.of(i.ge(j), s))));
        check(
                "if-empty-else",
                loop(j, 8, loop(i, 8, new IfThenElse(i.lt(j), s, Seq.empty()))),
                loop(j, 8, loop(i, 8, IfThenElse.of(i.lt(j), s))));
    }

    @Test
    void aStatementWithNothingToSimplifyComesBackAsTheSameObject() {
        Stmt in = loop(
                i0,
                64,
                loop(i1, 8, storeB(i0, i1, new BufferLoad(a, List.of(i0.mul(8).add(i1))))));
        assertSame(in, new Simplifier().simplify(in));
    }

    @Test
    void outerRangesPassedToTheSimplifierApply() {
        Stmt in = storeA(i.floordiv(8), c(1));
        Stmt out = new Simplifier(Map.of(i, IntRange.of(0, 7))).simplify(in);
        assertEquals(storeA(c(0), c(1)), out);
    }
}
