package dev.kiln.arith;

import static dev.kiln.arith.Check.assertRule;
import static dev.kiln.arith.Check.assertUnchanged;

import dev.kiln.ir.DType;
import dev.kiln.ir.Expr;
import dev.kiln.ir.FloatImm;
import dev.kiln.ir.IntImm;
import dev.kiln.ir.Var;
import org.junit.jupiter.api.Test;

/**
 * One test per identity and canonical-form rule: exact result form, rule fired, values preserved.
 * The integer + - * rules are one rule now, tested in {@link LinearNormalizeTest}.
 */
class ArithRulesTest {
    private final Var x = new Var("x"), y = new Var("y");
    private final Var f = new Var("f", DType.FLOAT32);

    private static Expr c(long v) {
        return IntImm.i32(v);
    }

    private static Expr f32(double v) {
        return FloatImm.f32(v);
    }

    @Test
    void addZeroForFloatsIsOnlyTheNegativeZero() {
        assertRule("add-zero", f.add(f32(-0.0)), f); // x + (-0.0) is x for every float
        assertRule("add-zero", f32(-0.0).add(f), f);
    }

    @Test
    void subZeroForFloats() {
        assertRule("sub-zero", f.sub(f32(0.0)), f); // -0.0 - 0.0 = -0.0
    }

    @Test
    void mulOneForFloats() {
        assertRule("mul-one", f.mul(f32(1.0)), f);
        assertRule("mul-one", f32(1.0).mul(f), f);
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
    void minMaxSelf() {
        assertRule("min-max-self", x.add(y).min(x.add(y)), x.add(y));
        assertRule("min-max-self", x.max(x), x);
        assertRule("min-max-self", f.min(f), f);
    }

    @Test
    void constRight() {
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
    void minMaxConstFold() {
        assertRule("min-max-const-fold", x.min(5).min(3), x.min(3));
        assertRule("min-max-const-fold", x.max(5).max(3), x.max(5));
    }
}
