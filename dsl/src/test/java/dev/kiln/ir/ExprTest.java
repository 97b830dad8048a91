package dev.kiln.ir;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.Map;
import org.junit.jupiter.api.Test;

class ExprTest {

    @Test
    void literalsTakeTheOtherOperandsType() {
        Var i = new Var("i");
        Var x = new Var("x", DType.FLOAT16);
        assertThat(i.add(1).dtype()).isEqualTo(DType.INT32);
        assertThat(x.mul(0.5)).isEqualTo(new Binary(BinaryOp.MUL, x, new FloatImm(DType.FLOAT16, 0.5)));
        assertThat(i.mul(2.0)).isEqualTo(new Binary(BinaryOp.MUL, i, IntImm.i32(2)));
        assertThat(i.lt(3).dtype()).isEqualTo(DType.BOOL);
    }

    @Test
    void castIsTheOnlyWayToMixTypes() {
        Var i = new Var("i");
        Var x = new Var("x", DType.FLOAT32);
        assertThrows(KilnException.class, () -> x.add(i));
        assertThat(x.add(i.cast(DType.FLOAT32)).dtype()).isEqualTo(DType.FLOAT32);
        assertThat(x.cast(DType.FLOAT32)).isSameAs(x);
    }

    @Test
    void varsCompareByIdentity() {
        Var a = new Var("i");
        Var b = new Var("i");
        assertThat(a).isNotEqualTo(b);
        assertThat(a.add(1)).isEqualTo(a.add(1)).isNotEqualTo(b.add(1));
    }

    @Test
    void substituteReplacesOnlyTheGivenVariable() {
        Var i = new Var("i");
        Var j = new Var("j");
        Expr e = i.mul(4).add(j);
        Expr s = Exprs.substitute(e, Map.of(i, IntImm.i32(3)));
        assertThat(s.toString()).isEqualTo("((3 * 4) + j)");
        assertThat(Exprs.substitute(e, Map.of(new Var("i"), IntImm.i32(3)))).isSameAs(e);
    }

    @Test
    void printerShowsTypesThatAreNotTheDefault() {
        Var i = new Var("i");
        assertThat(new Binary(BinaryOp.FLOORDIV, i, IntImm.i32(4)).toString()).isEqualTo("floordiv(i, 4)");
        assertThat(new FloatImm(DType.FLOAT64, 1.5).toString()).isEqualTo("float64(1.5)");
        assertThat(IntImm.i64(7).toString()).isEqualTo("int64(7)");
        assertThat(i.lt(3).and(i.ge(0)).not().toString()).isEqualTo("!((i < 3) && (i >= 0))");
    }

    @Test
    void intrinsicArityAndTypesAreChecked() {
        Var x = new Var("x", DType.FLOAT32);
        assertThrows(KilnException.class, () -> new Call(Intrinsic.POW, java.util.List.of(x)));
        assertThat(new Call(Intrinsic.ABS, java.util.List.of(new Var("n"))).dtype())
                .isEqualTo(DType.INT32);
    }

    @Test
    void dtypeRangesAndParsing() {
        assertThat(DType.INT8.minInt()).isEqualTo(-128);
        assertThat(DType.UINT8.maxInt()).isEqualTo(255);
        assertThat(DType.BFLOAT16.bytes()).isEqualTo(2);
        assertThat(DType.BOOL.bytes()).isEqualTo(1);
        for (DType t : DType.values()) assertThat(DType.parse(t.displayName())).isEqualTo(t);
        assertThrows(KilnException.class, () -> DType.parse("float8"));
    }
}
