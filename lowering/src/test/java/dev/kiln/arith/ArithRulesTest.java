package dev.kiln.arith;

import static dev.kiln.arith.Check.assertRule;
import static dev.kiln.arith.Check.assertUnchanged;

import dev.kiln.ir.DType;
import dev.kiln.ir.Expr;
import dev.kiln.ir.FloatImm;
import dev.kiln.ir.IntImm;
import dev.kiln.ir.Var;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** One test per identity and canonical-form rule: exact result form, rule fired, values preserved. */
class ArithRulesTest {
    private final Var x = new Var("x"), y = new Var("y"), z = new Var("z");
    private final Var f = new Var("f", DType.FLOAT32);
    private final Var b8 = new Var("b", DType.INT8);
    private final Var u8 = new Var("u", DType.UINT8);

    private static Expr c(long v) { return IntImm.i32(v); }

    private static Expr f32(double v) { return FloatImm.f32(v); }

    @Test
    void addZero() {
        assertRule("add-zero", x.add(0), x);
        assertRule("add-zero", c(0).add(y.mul(z)), y.mul(z));
        assertRule("add-zero", f.add(f32(-0.0)), f); // x + (-0.0) is x for every float
        assertRule("add-zero", f32(-0.0).add(f), f);
    }

    @Test
    void subZero() {
        assertRule("sub-zero", x.sub(0), x);
        assertRule("sub-zero", f.sub(f32(0.0)), f); // -0.0 - 0.0 = -0.0
    }

    @Test
    void mulOne() {
        assertRule("mul-one", x.mul(1), x);
        assertRule("mul-one", c(1).mul(x.add(y)), x.add(y));
        assertRule("mul-one", f.mul(f32(1.0)), f);
        assertRule("mul-one", f32(1.0).mul(f), f);
    }

    @Test
    void mulZero() {
        assertRule("mul-zero", x.mul(0), c(0));
        assertRule("mul-zero", c(0).mul(x.add(y)), c(0));
        assertRule("mul-zero", new Var("w", DType.INT64).mul(0L), IntImm.i64(0));
    }

    @Test
    void mulZeroKeepsAPossibleDivisionByZero() {
        Expr risky = x.floordiv(z).mul(0);
        assertUnchanged("mul-zero", risky, Map.of(z, IntRange.of(0, 3)));
        assertRule("mul-zero", risky, c(0), Map.of(z, IntRange.of(1, 3)));
    }

    @Test
    void divOne() {
        assertRule("div-one", x.floordiv(1), x);
        assertRule("div-one", x.truncdiv(1), x);
        assertRule("div-one", f.div(f32(1.0)), f);
    }

    @Test
    void modOne() {
        assertRule("mod-one", x.floormod(1), c(0));
        assertRule("mod-one", x.truncmod(1), c(0));
    }

    @Test
    void subSelf() {
        Expr e = x.mul(3).add(y);
        assertRule("sub-self", e.sub(x.mul(3).add(y)), c(0));
    }

    @Test
    void minMaxSelf() {
        assertRule("min-max-self", x.add(y).min(x.add(y)), x.add(y));
        assertRule("min-max-self", x.max(x), x);
        assertRule("min-max-self", f.min(f), f);
    }

    @Test
    void constRight() {
        assertRule("const-right", c(3).add(x), x.add(3));
        assertRule("const-right", c(4).mul(x), x.mul(4));
        assertRule("const-right", f32(2.0).mul(f), f.mul(f32(2.0)));
        assertRule("const-right", f32(2.0).add(f), f.add(f32(2.0)));
        assertRule("const-right", c(3).min(x), x.min(3));
        assertRule("const-right", c(3).max(x), x.max(3));
    }

    @Test
    void constRightLeavesFloatMinMax() {
        assertUnchanged("const-right", f32(2.0).min(f));
    }

    @Test
    void addConstFold() {
        assertRule("add-const-fold", x.add(3).add(4), x.add(7));
        assertRule("add-const-fold", x.sub(3).add(4), x.add(1));
        assertRule("add-const-fold", x.add(3).sub(5), x.sub(2));
        assertRule("add-const-fold", x.sub(3).sub(4), x.sub(7));
        assertRule("add-const-fold", x.add(3).sub(3), x);
    }

    @Test
    void addConstFoldWrapsInTheType() {
        // int8: 100 + 100 wraps to -56; the values agree everywhere, overflow included.
        assertRule("add-const-fold", b8.add(100).add(100), b8.sub(56));
        assertRule("add-const-fold", u8.add(200).add(100), u8.add(44));
        assertRule("add-const-fold", x.add(Integer.MAX_VALUE).add(1), x.add(Integer.MIN_VALUE));
    }

    @Test
    void offsetSign() {
        assertRule("offset-sign", x.add(-3), x.sub(3));
        assertRule("offset-sign", x.sub(-3), x.add(3));
        assertRule("offset-sign", u8.add(200), u8.sub(56));
        assertRule("offset-sign", u8.sub(250), u8.add(6));
    }

    @Test
    void constOutward() {
        assertRule("const-outward", x.add(3).add(y), x.add(y).add(3));
        assertRule("const-outward", x.add(y.sub(2)), x.add(y).sub(2));
        assertRule("const-outward", x.sub(3).sub(y), x.sub(y).sub(3));
        assertRule("const-outward", x.sub(y.add(2)), x.sub(y).sub(2));
        assertRule("const-outward", x.sub(y.sub(2)), x.sub(y).add(2));
        // offsets meet and fold: (x + 3) + (y - 5) -> (x + y) - 2
        assertRule("const-outward", x.add(3).add(y.sub(5)), x.add(y).sub(2));
    }

    @Test
    void addSubCancel() {
        Expr e = x.mul(4);
        assertRule("add-sub-cancel", e.add(y).sub(y), e);
        assertRule("add-sub-cancel", e.add(y).sub(e), y);
        assertRule("add-sub-cancel", e.sub(y).add(y), e);
        assertRule("add-sub-cancel", y.add(e.sub(y)), e);
    }

    @Test
    void negAdd() {
        assertRule("neg-add", c(0).sub(y).add(x), x.sub(y));
        assertRule("neg-add", x.add(c(0).sub(y)), x.sub(y));
        assertRule("neg-add", x.sub(c(0).sub(y)), x.add(y));
    }

    @Test
    void likeTerms() {
        assertRule("like-terms", x.mul(3).add(x.mul(5)), x.mul(8));
        assertRule("like-terms", x.mul(3).sub(x.mul(5)), x.mul(-2));
        assertRule("like-terms", x.add(x.mul(4)), x.mul(5));
        assertRule("like-terms", x.add(x), x.mul(2));
        assertRule("like-terms", x.mul(3).sub(x), x.mul(2));
        assertRule("like-terms", x.mul(3).sub(x.mul(2)), x);
    }

    @Test
    void likeTermsNested() {
        assertRule("like-terms-nested", y.add(x.mul(3)).add(x.mul(5)), y.add(x.mul(8)));
        assertRule("like-terms-nested", x.mul(3).add(y).add(x.mul(2)), x.mul(5).add(y));
        assertRule("like-terms-nested", y.sub(x.mul(3)).add(x.mul(5)), y.add(x.mul(2)));
        assertRule("like-terms-nested", x.mul(3).sub(y).sub(x.mul(3)), c(0).sub(y));
    }

    @Test
    void mulConstFold() {
        assertRule("mul-const-fold", x.mul(3).mul(4), x.mul(12));
        // int8: 16 * 16 = 256 wraps to 0, so b * 16 * 16 is 0 for every b
        assertRule("mul-const-fold", b8.mul(16).mul(16), new IntImm(DType.INT8, 0));
    }

    @Test
    void mulDistributeOffset() {
        assertRule("mul-distribute-offset", x.add(2).mul(3), x.mul(3).add(6));
        assertRule("mul-distribute-offset", x.sub(2).mul(3), x.mul(3).sub(6));
        assertRule("mul-distribute-offset", x.add(1).mul(8).sub(8), x.mul(8));
    }

    @Test
    void minMaxConstFold() {
        assertRule("min-max-const-fold", x.min(5).min(3), x.min(3));
        assertRule("min-max-const-fold", x.max(5).max(3), x.max(5));
    }
}
