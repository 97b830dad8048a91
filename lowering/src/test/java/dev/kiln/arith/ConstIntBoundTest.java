package dev.kiln.arith;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kiln.ir.Call;
import dev.kiln.ir.Cast;
import dev.kiln.ir.DType;
import dev.kiln.ir.Expr;
import dev.kiln.ir.IntImm;
import dev.kiln.ir.Intrinsic;
import dev.kiln.ir.KilnException;
import dev.kiln.ir.Select;
import dev.kiln.ir.Var;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** The constant-integer-bound analysis: exact cases by hand, and soundness on random expressions. */
class ConstIntBoundTest {
    private final Var i = new Var("i"), j = new Var("j"), n = new Var("n");
    private final ConstIntBound cb =
            new ConstIntBound(Map.of(i, IntRange.ofExtent(0, 64), j, IntRange.ofExtent(0, 8), n, IntRange.of(-10, 5)));

    private static IntRange r(long lo, long hi) {
        return IntRange.of(lo, hi);
    }

    @Test
    void constantsAndVariables() {
        assertEquals(r(7, 7), cb.bound(IntImm.i32(7)));
        assertEquals(r(0, 63), cb.bound(i));
        assertEquals(IntRange.full(DType.INT32), cb.bound(new Var("free")));
        assertEquals(r(0, 255), cb.bound(new Var("u", DType.UINT8)));
    }

    @Test
    void arithmetic() {
        assertEquals(r(0, 511), cb.bound(i.mul(8).add(j)));
        assertEquals(r(-7, 63), cb.bound(i.sub(j)));
        assertEquals(r(-189, 0), cb.bound(i.mul(-3)));
        assertEquals(r(-630, 315), cb.bound(i.mul(n)));
        assertEquals(r(-10, 5), cb.bound(i.min(n)));
        assertEquals(r(0, 63), cb.bound(i.max(n)));
    }

    @Test
    void divisionsAndRemainders() {
        assertEquals(r(0, 7), cb.bound(i.floordiv(8)));
        assertEquals(r(-8, 0), cb.bound(i.floordiv(-8))); // floor(63 / -8) = -8
        assertEquals(r(-4, 1), cb.bound(n.floordiv(3))); // floor(-10/3) = -4, floor(5/3) = 1
        assertEquals(r(-3, 1), cb.bound(n.truncdiv(3))); // trunc(-10/3) = -3
        assertEquals(r(0, 7), cb.bound(i.floormod(8)));
        assertEquals(r(0, 7), cb.bound(j.floormod(100))); // j < 100: the remainder is j
        assertEquals(r(3, 5), cb.bound(j.add(16).floormod(8).max(3).min(5)));
        assertEquals(r(-2, 0), cb.bound(i.floormod(-3)));
        assertEquals(r(-2, 2), cb.bound(n.truncmod(3))); // sign of the dividend
        assertEquals(r(0, 7), cb.bound(i.truncmod(j.add(1).add(0)).max(0).min(7)));
        assertEquals(r(0, 63), cb.bound(i.floordiv(j.add(1)))); // divisor in [1, 8]
    }

    @Test
    void selectCastAbs() {
        assertEquals(r(-10, 63), cb.bound(new Select(i.lt(j), i, n)));
        assertEquals(r(0, 63), cb.bound(new Cast(DType.INT8, i)));
        assertEquals(IntRange.full(DType.INT8), cb.bound(new Cast(DType.INT8, i.mul(4))));
        assertEquals(r(0, 63), cb.bound(new Cast(DType.INT64, i)));
        assertEquals(r(0, 10), cb.bound(new Call(Intrinsic.ABS, List.of(n))));
        assertEquals(r(0, 1), cb.bound(i.lt(j)));
    }

    @Test
    void aNodeThatMayWrapSpansItsType() {
        assertEquals(IntRange.full(DType.INT32), cb.bound(i.mul(1 << 26)));
        assertEquals(IntRange.full(DType.INT32), cb.bound(new Var("free").add(1)));
        Var b = new Var("b", DType.INT8);
        ConstIntBound small = new ConstIntBound(Map.of(b, r(0, 100)));
        assertEquals(IntRange.full(DType.INT8), small.bound(b.add(100)));
        assertEquals(r(27, 127), small.bound(b.add(27)));
    }

    @Test
    void floatsHaveNoIntegerBound() {
        assertThrows(KilnException.class, () -> cb.bound(new Var("f", DType.FLOAT32)));
    }

    @Test
    void boundsHoldOnRandomExpressions() {
        Random rnd = new Random(11);
        for (DType t : List.of(DType.INT32, DType.INT8)) {
            List<Var> vs = List.of(new Var("a", t), new Var("b", t), new Var("c", t));
            for (int e = 0; e < 300; e++) {
                Map<Var, IntRange> ranges = new HashMap<>();
                for (Var v : vs) ranges.put(v, RandomExprs.range(rnd, t));
                Expr x = new RandomExprs(rnd, vs).intExpr(4);
                IntRange b = new ConstIntBound(ranges).bound(x);
                for (int p = 0; p < 40; p++) {
                    Map<Var, Number> env = new HashMap<>();
                    for (Var v : vs) env.put(v, Check.sample(t, ranges.get(v), rnd));
                    long val;
                    try {
                        val = new TestEval(env).i(x);
                    } catch (ArithmeticException divisionByZero) {
                        continue;
                    }
                    assertTrue(b.contains(val), x + " = " + val + " at " + env + " is outside its bound " + b);
                }
            }
        }
    }
}
