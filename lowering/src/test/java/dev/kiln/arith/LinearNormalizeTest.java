package dev.kiln.arith;

import static dev.kiln.arith.Check.assertRule;
import static dev.kiln.arith.Check.assertUnchanged;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.kiln.ir.DType;
import dev.kiln.ir.Expr;
import dev.kiln.ir.FloatImm;
import dev.kiln.ir.IntImm;
import dev.kiln.ir.Select;
import dev.kiln.ir.Var;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The rule {@code linear-normalize}: the canonical linear form of integer + - *. The first tests
 * are the behaviours of the small rules it replaced (named after them), with the same results;
 * then the form itself: order, signs, wrapping, zero terms, atoms.
 */
class LinearNormalizeTest {
    private static final String RULE = "linear-normalize";
    private final Var x = new Var("x"), y = new Var("y"), z = new Var("z");
    private final Var b8 = new Var("b", DType.INT8), c8 = new Var("c", DType.INT8);
    private final Var u8 = new Var("u", DType.UINT8);
    private final Var w = new Var("w", DType.INT64);

    private static Expr c(long v) {
        return IntImm.i32(v);
    }

    @Test
    void addZeroSubZeroMulOne() {
        assertRule(RULE, x.add(0), x);
        assertRule(RULE, c(0).add(y.mul(z)), y.mul(z));
        assertRule(RULE, x.sub(0), x);
        assertRule(RULE, x.mul(1), x);
        assertRule(RULE, c(1).mul(x.add(y)), x.add(y));
    }

    @Test
    void mulZero() {
        assertRule(RULE, x.mul(0), c(0));
        assertRule(RULE, c(0).mul(x.add(y)), c(0));
        assertRule(RULE, w.mul(0L), IntImm.i64(0));
    }

    @Test
    void aZeroTermThatMayDivideByZeroStays() {
        Expr risky = x.floordiv(z);
        Map<Var, IntRange> zMayBeZero = Map.of(z, IntRange.of(0, 3));
        assertUnchanged(RULE, risky.mul(0), zMayBeZero);
        assertRule(RULE, risky.sub(risky), risky.mul(0), zMayBeZero);
        assertRule(RULE, risky.add(y).sub(risky), y.add(risky.mul(0)), zMayBeZero);
        assertRule(RULE, risky.mul(0), c(0), Map.of(z, IntRange.of(1, 3)));
        assertRule(RULE, risky.sub(risky), c(0), Map.of(z, IntRange.of(1, 3)));
    }

    @Test
    void subSelf() {
        Expr e = x.mul(3).add(y);
        assertRule(RULE, e.sub(x.mul(3).add(y)), c(0));
    }

    @Test
    void constantsGoRight() {
        assertRule(RULE, c(3).add(x), x.add(3));
        assertRule(RULE, c(4).mul(x), x.mul(4));
    }

    @Test
    void addConstFold() {
        assertRule(RULE, x.add(3).add(4), x.add(7));
        assertRule(RULE, x.sub(3).add(4), x.add(1));
        assertRule(RULE, x.add(3).sub(5), x.sub(2));
        assertRule(RULE, x.sub(3).sub(4), x.sub(7));
        assertRule(RULE, x.add(3).sub(3), x);
    }

    @Test
    void constantsWrapInTheType() {
        // int8: 100 + 100 wraps to -56; the values agree everywhere, overflow included.
        assertRule(RULE, b8.add(100).add(100), b8.sub(56));
        assertRule(RULE, u8.add(200).add(100), u8.add(44));
        assertRule(RULE, x.add(Integer.MAX_VALUE).add(1), x.add(Integer.MIN_VALUE));
    }

    @Test
    void offsetSign() {
        assertRule(RULE, x.add(-3), x.sub(3));
        assertRule(RULE, x.sub(-3), x.add(3));
        assertRule(RULE, u8.add(200), u8.sub(56));
        assertRule(RULE, u8.sub(250), u8.add(6));
    }

    @Test
    void constOutward() {
        assertRule(RULE, x.add(3).add(y), x.add(y).add(3));
        assertRule(RULE, x.add(y.sub(2)), x.add(y).sub(2));
        assertRule(RULE, x.sub(3).sub(y), x.sub(y).sub(3));
        assertRule(RULE, x.sub(y.add(2)), x.sub(y).sub(2));
        assertRule(RULE, x.sub(y.sub(2)), x.sub(y).add(2));
        assertRule(RULE, x.add(3).add(y.sub(5)), x.add(y).sub(2));
    }

    @Test
    void addSubCancel() {
        Expr e = x.mul(4);
        assertRule(RULE, e.add(y).sub(y), e);
        assertRule(RULE, e.add(y).sub(e), y);
        assertRule(RULE, e.sub(y).add(y), e);
        assertRule(RULE, y.add(e.sub(y)), e);
    }

    @Test
    void negAdd() {
        assertRule(RULE, c(0).sub(y).add(x), x.sub(y));
        assertRule(RULE, x.add(c(0).sub(y)), x.sub(y));
        assertRule(RULE, x.sub(c(0).sub(y)), x.add(y));
    }

    @Test
    void likeTerms() {
        assertRule(RULE, x.mul(3).add(x.mul(5)), x.mul(8));
        assertRule(RULE, x.mul(3).sub(x.mul(5)), x.mul(-2));
        assertRule(RULE, x.add(x.mul(4)), x.mul(5));
        assertRule(RULE, x.add(x), x.mul(2));
        assertRule(RULE, x.mul(3).sub(x), x.mul(2));
        assertRule(RULE, x.mul(3).sub(x.mul(2)), x);
    }

    @Test
    void likeTermsAtAnyDepth() {
        assertRule(RULE, y.add(x.mul(3)).add(x.mul(5)), y.add(x.mul(8)));
        assertRule(RULE, x.mul(3).add(y).add(x.mul(2)), x.mul(5).add(y));
        assertRule(RULE, y.sub(x.mul(3)).add(x.mul(5)), y.add(x.mul(2)));
        assertRule(RULE, x.mul(3).sub(y).sub(x.mul(3)), c(0).sub(y));
        assertRule(
                RULE,
                x.add(y.add(z.add(x.mul(2)))).sub(y.mul(2)),
                x.mul(3).sub(y).add(z));
    }

    @Test
    void mulConstFold() {
        assertRule(RULE, x.mul(3).mul(4), x.mul(12));
        // int8: 16 * 16 = 256 wraps to 0, so b * 16 * 16 is 0 for every b
        assertRule(RULE, b8.mul(16).mul(16), new IntImm(DType.INT8, 0));
    }

    @Test
    void productsWithConstantsDistribute() {
        assertRule(RULE, x.add(2).mul(3), x.mul(3).add(6));
        assertRule(RULE, x.sub(2).mul(3), x.mul(3).sub(6));
        assertRule(RULE, x.add(1).mul(8).sub(8), x.mul(8));
        assertRule(RULE, x.add(1).mul(2).add(y).mul(3), x.mul(6).add(y.mul(3)).add(6));
        assertRule(RULE, c(2).mul(x.sub(y)), x.mul(2).sub(y.mul(2)));
    }

    @Test
    void theFirstPositiveTermLeadsAndNegativeTermsAreSubtracted() {
        assertRule(RULE, c(0).sub(x.mul(3)).add(y), y.sub(x.mul(3)));
        assertRule(RULE, c(0).sub(x).sub(y).add(z.mul(2)), z.mul(2).sub(x).sub(y));
        // no positive term: a positive constant leads, else the first term
        assertRule(RULE, c(0).sub(x).add(5), c(5).sub(x));
        assertRule(RULE, c(0).sub(x.mul(2)).sub(y).add(5), c(5).sub(x.mul(2)).sub(y));
        assertUnchanged(RULE, c(0).sub(x).sub(5));
        assertRule(RULE, c(0).sub(x.mul(2)).sub(y), x.mul(-2).sub(y));
    }

    @Test
    void coefficientsWrapInTheType() {
        assertRule(RULE, b8.mul(100).add(b8.mul(100)), b8.mul(-56)); // 200 is -56 in int8
        assertRule(RULE, b8.mul(64).add(b8.mul(64)).add(c8), c8.add(b8.mul(-128))); // -128 cannot be negated
        assertRule(RULE, u8.mul(255), new IntImm(DType.UINT8, 0).sub(u8)); // u * 255 is -u modulo 256
        assertRule(RULE, u8.sub(u8.mul(129)), u8.mul(128)); // 1 - 129 = -128, written * 128
        assertRule(RULE, w.mul(1L << 40).add(w.mul(1L << 40)), w.mul(1L << 41));
    }

    @Test
    void theFormIsAFixedPoint() {
        assertUnchanged(RULE, x.mul(2).add(y).sub(z.mul(3)).add(4));
        assertUnchanged(RULE, c(5).sub(x));
        assertUnchanged(RULE, c(0).sub(x));
        assertUnchanged(RULE, x.mul(-3));
        assertUnchanged(RULE, u8.mul(200)); // -56 in int8 terms, written as the uint8 constant 200
    }

    @Test
    void atomsAreComparedStructurally() {
        Expr d = x.add(3).floordiv(4);
        Expr d2 = x.add(3).floordiv(4); // equal, not the same object
        assertRule(RULE, d.mul(4).add(y).sub(d2.mul(4)), y);
        assertRule(RULE, x.mul(y).add(x.mul(y)), x.mul(y).mul(2));
        assertRule(RULE, x.max(y).sub(1).sub(x.max(y)), c(-1));
        Expr sel = new Select(x.lt(y), x, y);
        assertRule(RULE, sel.add(z).sub(new Select(x.lt(y), x, y)), z);
    }

    @Test
    void productsOfTwoNonConstantsAreAtoms() {
        assertUnchanged(RULE, x.add(1).mul(y.add(2)));
        // x * y and y * x are different atoms: the form does not reorder inside an atom
        assertUnchanged(RULE, x.mul(y).sub(y.mul(x)));
    }

    @Test
    void floatsAreLeftAlone() {
        Var f = new Var("f", DType.FLOAT32);
        assertUnchanged(RULE, f.add(FloatImm.f32(1.0)).add(FloatImm.f32(2.0)));
        assertUnchanged(RULE, f.sub(f));
        assertUnchanged(RULE, f.mul(FloatImm.f32(0.0)));
        assertUnchanged(RULE, f.add(FloatImm.f32(0.0)));
    }

    @Test
    void signedRepresentativeOfACoefficient() {
        assertEquals(-56, LinearForm.reduce(DType.UINT8, 200));
        assertEquals(127, LinearForm.reduce(DType.UINT8, 127));
        assertEquals(-128, LinearForm.reduce(DType.UINT8, 128));
        assertEquals(-56, LinearForm.reduce(DType.INT8, 200));
        assertEquals(0, LinearForm.reduce(DType.INT16, 1 << 16));
    }
}
