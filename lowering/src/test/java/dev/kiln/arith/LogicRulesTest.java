package dev.kiln.arith;

import static dev.kiln.arith.Check.assertRule;
import static dev.kiln.arith.Check.assertUnchanged;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.kiln.ir.Cast;
import dev.kiln.ir.DType;
import dev.kiln.ir.Expr;
import dev.kiln.ir.FloatImm;
import dev.kiln.ir.IntImm;
import dev.kiln.ir.Select;
import dev.kiln.ir.Var;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** One test per comparison, logic, select and cast rule, and the rules decided by bounds. */
class LogicRulesTest {
    private final Var x = new Var("x"), y = new Var("y"), i = new Var("i");
    private final Var f = new Var("f", DType.FLOAT32);
    private final Var p = new Var("p", DType.BOOL), q = new Var("q", DType.BOOL);
    private static final Expr TRUE = IntImm.bool(true), FALSE = IntImm.bool(false);

    private static Expr c(long v) {
        return IntImm.i32(v);
    }

    @Test
    void compareSelf() {
        Expr e = x.mul(3).add(y);
        assertRule("compare-self", e.eq(x.mul(3).add(y)), TRUE);
        assertRule("compare-self", e.le(e), TRUE);
        assertRule("compare-self", e.ge(e), TRUE);
        assertRule("compare-self", e.ne(e), FALSE);
        assertRule("compare-self", e.lt(e), FALSE);
        assertRule("compare-self", e.gt(e), FALSE);
    }

    @Test
    void compareConstRight() {
        assertRule("compare-const-right", c(3).lt(x), x.gt(3));
        assertRule("compare-const-right", c(3).ge(x), x.le(3));
        assertRule("compare-const-right", FloatImm.f32(1.0).lt(f), f.gt(FloatImm.f32(1.0)));
    }

    @Test
    void compareByBounds() {
        Map<Var, IntRange> r = Map.of(i, IntRange.of(0, 511));
        assertRule("compare-by-bounds", i.lt(512), TRUE, r);
        assertRule("compare-by-bounds", i.ge(0), TRUE, r);
        assertRule("compare-by-bounds", i.eq(600), FALSE, r);
        assertRule("compare-by-bounds", i.ne(-1), TRUE, r);
        assertRule("compare-by-bounds", i.gt(511), FALSE, r);
        assertRule("compare-by-bounds", i.le(-1), FALSE, r);
        assertUnchanged("compare-by-bounds", i.lt(511), r);
    }

    @Test
    void compareByBoundsOfTheSimplifiedDifference() {
        Map<Var, IntRange> r = Map.of(i, IntRange.of(0, 100));
        assertRule("compare-by-bounds", i.add(1).gt(i), TRUE, r);
        assertRule("compare-by-bounds", i.mul(2).add(3).lt(i.add(i).add(4)), TRUE, r);
        // without a range, i + 1 > i is false at the int32 maximum (i + 1 wraps): not folded
        assertUnchanged("compare-by-bounds", i.add(1).gt(i));
        assertEquals(
                0, new TestEval(Map.of(i, (long) Integer.MAX_VALUE)).i(i.add(1).gt(i)));
    }

    @Test
    void compareByBoundsOfTheLinearDifferenceInUint8() {
        Var u = new Var("u", DType.UINT8);
        // u + 1 - u is 1 modulo 256, and the true difference lies in [-99, 101]: it is 1
        assertRule("compare-by-bounds", u.add(1).gt(u), TRUE, Map.of(u, IntRange.of(0, 100)));
        // over all of uint8 it is not: 255 + 1 wraps to 0
        assertUnchanged("compare-by-bounds", u.add(1).gt(u));
        assertEquals(0, new TestEval(Map.of(u, 255L)).i(u.add(1).gt(u)));
    }

    @Test
    void minMaxByBounds() {
        Map<Var, IntRange> r = Map.of(i, IntRange.ofExtent(0, 64));
        assertRule("min-max-by-bounds", i.min(100), i, r);
        assertRule("min-max-by-bounds", i.max(100), c(100), r);
        assertRule("min-max-by-bounds", i.max(0), i, r);
        assertRule("min-max-by-bounds", i.min(i.add(1)), i, r);
        assertUnchanged("min-max-by-bounds", i.min(10), r);
    }

    @Test
    void andConst() {
        Expr cmp = x.lt(y);
        assertRule("and-const", cmp.and(TRUE), cmp);
        assertRule("and-const", TRUE.and(cmp), cmp);
        assertRule("and-const", cmp.and(FALSE), FALSE);
        assertRule("and-const", FALSE.and(cmp), FALSE);
    }

    @Test
    void orConst() {
        Expr cmp = x.lt(y);
        assertRule("or-const", cmp.or(FALSE), cmp);
        assertRule("or-const", FALSE.or(cmp), cmp);
        assertRule("or-const", cmp.or(TRUE), TRUE);
        assertRule("or-const", TRUE.or(cmp), TRUE);
    }

    @Test
    void andOrSelf() {
        assertRule("and-self", p.and(p), p);
        assertRule("or-self", x.lt(y).or(x.lt(y)), x.lt(y));
    }

    @Test
    void notNot() {
        assertRule("not-not", p.not().not(), p);
    }

    @Test
    void notCompare() {
        assertRule("not-compare", x.lt(y).not(), x.ge(y));
        assertRule("not-compare", x.eq(y).not(), x.ne(y));
        assertRule("not-compare", x.ge(y).not(), x.lt(y));
        assertRule("not-compare", p.eq(q).not(), p.ne(q));
    }

    @Test
    void selectConst() {
        assertRule("select-const", new Select(TRUE, x, y), x);
        assertRule("select-const", new Select(FALSE, x, y), y);
        // the branch not taken is never evaluated, so it may divide by zero
        assertRule("select-const", new Select(TRUE, x, y.floordiv(0)), x);
    }

    @Test
    void selectSame() {
        assertRule("select-same", new Select(x.lt(y), x.add(1), x.add(1)), x.add(1));
    }

    @Test
    void selectNot() {
        assertRule("select-not", new Select(p.not(), x, y), new Select(p, y, x));
    }

    @Test
    void castSame() {
        assertRule("cast-same", new Cast(DType.INT32, x), x);
    }
}
