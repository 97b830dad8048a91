package dev.kiln.arith;

import static dev.kiln.arith.Check.assertUnchanged;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kiln.ir.DType;
import dev.kiln.ir.Expr;
import dev.kiln.ir.FloatImm;
import dev.kiln.ir.IntImm;
import dev.kiln.ir.Select;
import dev.kiln.ir.Var;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Rewrites that look harmless but change a value, so the simplifier must not do them. Each test
 * shows the value that would change.
 */
class UnsafeRewritesTest {
    private final Var f = new Var("f", DType.FLOAT32), g = new Var("g", DType.FLOAT32);
    private final Var x = new Var("x"), y = new Var("y"), z = new Var("z");

    private static FloatImm f32(double v) {
        return FloatImm.f32(v);
    }

    private double eval(Expr e, double fv) {
        return new TestEval(Map.of(f, fv, g, 1.0)).f(e);
    }

    @Test
    void floatTimesZeroIsNotZero() {
        Expr e = f.mul(f32(0.0));
        assertUnchanged("linear-normalize", e);
        assertEquals(e, new Simplifier().simplify(f32(0.0).mul(f))); // only moved the constant right
        assertTrue(Double.isNaN(eval(e, Double.NaN)));
        assertTrue(Double.isNaN(eval(e, Double.POSITIVE_INFINITY)));
        assertEquals(Double.doubleToRawLongBits(-0.0), Double.doubleToRawLongBits(eval(e, -1.0)));
    }

    @Test
    void floatPlusPositiveZeroIsNotTheIdentity() {
        Expr e = f.add(f32(0.0));
        assertUnchanged("add-zero", e);
        // -0.0 + 0.0 = +0.0, so x + 0.0 differs from x at x = -0.0
        assertNotEquals(Double.doubleToRawLongBits(-0.0), Double.doubleToRawLongBits(eval(e, -0.0)));
        assertUnchanged("sub-zero", f.sub(f32(-0.0))); // x - (-0.0) = x + 0.0: same problem
    }

    @Test
    void floatsAreNotReassociated() {
        assertUnchanged("linear-normalize", f.add(f32(1.0)).add(f32(2.0)));
        assertUnchanged("linear-normalize", f.mul(f32(3.0)).mul(f32(5.0)));
        assertUnchanged("linear-normalize", f.add(f32(1.0)).add(g));
        assertUnchanged("linear-normalize", f.add(f32(1.0)).mul(f32(3.0)));
        assertUnchanged("linear-normalize", f.add(f));
        // why: in float32, (2^24 + 1) + 1 rounds twice to 2^24, but 2^24 + (1 + 1) is 2^24 + 2
        Expr e = f.add(f32(1.0)).add(f32(1.0));
        assertEquals(16777216.0, eval(e, 16777216.0));
        assertEquals(16777218.0, eval(f.add(f32(2.0)), 16777216.0));
    }

    @Test
    void floatSelfRulesAreNotApplied() {
        assertUnchanged("linear-normalize", f.sub(f)); // inf - inf = NaN
        assertTrue(Double.isNaN(eval(f.sub(f), Double.POSITIVE_INFINITY)));
        assertUnchanged("compare-self", f.eq(f)); // NaN == NaN is false
        assertEquals(0, new TestEval(Map.of(f, Double.NaN)).i(f.eq(f)));
        assertUnchanged("not-compare", f.lt(g).not()); // !(NaN < 1) is true, NaN >= 1 is false
        assertEquals(1, new TestEval(Map.of(f, Double.NaN, g, 1.0)).i(f.lt(g).not()));
        assertEquals(0, new TestEval(Map.of(f, Double.NaN, g, 1.0)).i(f.ge(g)));
    }

    @Test
    void divisionByZeroIsLeftForTheRuntime() {
        assertUnchanged("fold-binary", IntImm.i32(7).floordiv(IntImm.i32(0)));
        assertUnchanged("fold-binary", f32(1.0).div(f32(0.0)));
        // a sub-expression that may divide by zero is not dropped by an identity
        Map<Var, IntRange> zMayBeZero = Map.of(z, IntRange.of(0, 3));
        Expr risky = x.floordiv(z);
        assertKeepsDivision(risky.mul(0), zMayBeZero);
        assertKeepsDivision(risky.sub(risky), zMayBeZero);
        assertKeepsDivision(risky.floormod(1), zMayBeZero);
        assertKeepsDivision(risky.eq(risky), zMayBeZero);
        assertKeepsDivision(new Select(risky.lt(y), x, x), zMayBeZero);
        assertKeepsDivision(risky.lt(y).and(IntImm.bool(false)), zMayBeZero);
        assertKeepsDivision(risky.mul(2).floormod(2), zMayBeZero);
        // with z proven non-zero, the same expressions do simplify
        Map<Var, IntRange> zPositive = Map.of(z, IntRange.of(1, 3));
        assertEquals(IntImm.i32(0), new Simplifier(zPositive).simplify(risky.sub(risky)));
        assertEquals(x, new Simplifier(zPositive).simplify(new Select(risky.lt(y), x, x)));
    }

    private static void assertKeepsDivision(Expr e, Map<Var, IntRange> ranges) {
        Expr out = new Simplifier(ranges).simplify(e);
        boolean[] found = {false};
        dev.kiln.ir.Exprs.forEach(out, n -> {
            if (n instanceof dev.kiln.ir.Binary b && b.op() == dev.kiln.ir.BinaryOp.FLOORDIV) found[0] = true;
        });
        assertTrue(found[0], e + " simplified to " + out + ", dropping a division that may be by zero");
        Check.assertSameValues(e, out, ranges, 200, 1);
    }

    @Test
    void integerRulesNeedingNoOverflowWaitForAProof() {
        assertUnchanged("div-of-multiple", x.mul(8).floordiv(8));
        assertUnchanged("div-split-sum", x.mul(8).add(y).floordiv(8));
        assertUnchanged("mod-split-sum", x.mul(6).add(y).floormod(3));
        assertUnchanged("compare-by-bounds", x.add(1).gt(x));
        // int8: x * 2 / 2 is not x once x * 2 wraps (x = 100: 200 wraps to -56, / 2 = -28)
        Var b = new Var("b", DType.INT8);
        assertUnchanged("div-of-multiple", b.mul(2).floordiv(2), Map.of(b, IntRange.of(0, 100)));
        assertEquals(-28, new TestEval(Map.of(b, 100L)).i(b.mul(2).floordiv(2)));
    }
}
