package dev.kiln.arith;

import static dev.kiln.arith.Check.assertUnchanged;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import dev.kiln.ir.Binary;
import dev.kiln.ir.BinaryOp;
import dev.kiln.ir.Call;
import dev.kiln.ir.Cast;
import dev.kiln.ir.DType;
import dev.kiln.ir.Expr;
import dev.kiln.ir.FloatImm;
import dev.kiln.ir.IntImm;
import dev.kiln.ir.Intrinsic;
import dev.kiln.ir.Select;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** Constant folding with exactly the semantics of each type. */
class ConstFoldTest {
    private static Expr fold(Expr e) {
        return new Simplifier().simplify(e);
    }

    private static IntImm i(DType t, long v) {
        return new IntImm(t, v);
    }

    private static long foldInt(BinaryOp op, DType t, long a, long b) {
        return ((IntImm) fold(new Binary(op, i(t, a), i(t, b)))).value();
    }

    private static double foldFloat(Expr e) {
        return ((FloatImm) fold(e)).value();
    }

    @Test
    void int32WrapsLikeJavaInt() {
        Random rnd = new Random(1);
        for (int n = 0; n < 2000; n++) {
            int a = n < 4 ? new int[] {Integer.MAX_VALUE, Integer.MIN_VALUE, -1, 0}[n] : rnd.nextInt();
            int b = rnd.nextInt(4) == 0 ? rnd.nextInt(19) - 9 : rnd.nextInt();
            assertEquals(a + b, foldInt(BinaryOp.ADD, DType.INT32, a, b));
            assertEquals(a - b, foldInt(BinaryOp.SUB, DType.INT32, a, b));
            assertEquals(a * b, foldInt(BinaryOp.MUL, DType.INT32, a, b));
            assertEquals(Math.min(a, b), foldInt(BinaryOp.MIN, DType.INT32, a, b));
            assertEquals(Math.max(a, b), foldInt(BinaryOp.MAX, DType.INT32, a, b));
            if (b != 0 && !(a == Integer.MIN_VALUE && b == -1)) {
                assertEquals(Math.floorDiv(a, b), foldInt(BinaryOp.FLOORDIV, DType.INT32, a, b));
                assertEquals(Math.floorMod(a, b), foldInt(BinaryOp.FLOORMOD, DType.INT32, a, b));
                assertEquals(a / b, foldInt(BinaryOp.TRUNCDIV, DType.INT32, a, b));
                assertEquals(a % b, foldInt(BinaryOp.TRUNCMOD, DType.INT32, a, b));
            }
        }
    }

    @Test
    void int8WrapsAndUint8IsModulo256() {
        assertEquals(-56, foldInt(BinaryOp.ADD, DType.INT8, 100, 100));
        assertEquals(-2, foldInt(BinaryOp.MUL, DType.INT8, 127, 2));
        assertEquals(127, foldInt(BinaryOp.SUB, DType.INT8, -128, 1));
        assertEquals(44, foldInt(BinaryOp.ADD, DType.UINT8, 200, 100));
        assertEquals(254, foldInt(BinaryOp.SUB, DType.UINT8, 3, 5));
        assertEquals(16, foldInt(BinaryOp.MUL, DType.UINT8, 16, 17));
        assertEquals(-32768, foldInt(BinaryOp.ADD, DType.INT16, 32767, 1));
        assertEquals(Long.MIN_VALUE, foldInt(BinaryOp.ADD, DType.INT64, Long.MAX_VALUE, 1));
        for (int a = -128; a < 128; a += 7) {
            for (int b = -128; b < 128; b += 5) {
                assertEquals((byte) (a * b), foldInt(BinaryOp.MUL, DType.INT8, a, b));
                assertEquals((a & 255) * (b & 255) & 255, foldInt(BinaryOp.MUL, DType.UINT8, a & 255, b & 255));
            }
        }
    }

    @Test
    void divisionsRoundAsNamed() {
        // floor toward -inf, remainder with the divisor's sign; trunc toward 0, remainder with the dividend's
        long[][] table = { // a, b, floordiv, floormod, truncdiv, truncmod
            {7, 2, 3, 1, 3, 1},
            {-7, 2, -4, 1, -3, -1},
            {7, -2, -4, -1, -3, 1},
            {-7, -2, 3, -1, 3, -1},
            {-8, 4, -2, 0, -2, 0},
            {0, -3, 0, 0, 0, 0}
        };
        for (long[] r : table) {
            assertEquals(r[2], foldInt(BinaryOp.FLOORDIV, DType.INT32, r[0], r[1]), "floordiv" + r[0] + "," + r[1]);
            assertEquals(r[3], foldInt(BinaryOp.FLOORMOD, DType.INT32, r[0], r[1]), "floormod" + r[0] + "," + r[1]);
            assertEquals(r[4], foldInt(BinaryOp.TRUNCDIV, DType.INT32, r[0], r[1]), "truncdiv" + r[0] + "," + r[1]);
            assertEquals(r[5], foldInt(BinaryOp.TRUNCMOD, DType.INT32, r[0], r[1]), "truncmod" + r[0] + "," + r[1]);
        }
        assertEquals(-4, foldInt(BinaryOp.FLOORDIV, DType.INT8, -7, 2));
    }

    @Test
    void divisionByZeroIsNeverFolded() {
        for (BinaryOp op : List.of(BinaryOp.FLOORDIV, BinaryOp.FLOORMOD, BinaryOp.TRUNCDIV, BinaryOp.TRUNCMOD)) {
            assertUnchanged("fold-binary", new Binary(op, IntImm.i32(7), IntImm.i32(0)));
            assertUnchanged("fold-binary", new Binary(op, IntImm.i32(Integer.MIN_VALUE), IntImm.i32(-1)));
        }
        assertUnchanged("fold-binary", FloatImm.f32(1.0).div(FloatImm.f32(0.0)));
        assertUnchanged("fold-binary", FloatImm.f32(0.0).div(FloatImm.f32(-0.0)));
    }

    @Test
    void float32RoundsEveryOperation() {
        // 2^24 + 1 is not a float32: in float arithmetic 16777216 + 1 stays 16777216
        assertEquals(16777216.0, foldFloat(FloatImm.f32(16777216.0).add(FloatImm.f32(1.0))));
        // float64 is not rounded to float: 16777217 + 1 is exact
        assertEquals(16777218.0, foldFloat(new FloatImm(DType.FLOAT64, 16777217.0).add(1.0)));
        Random rnd = new Random(2);
        for (int n = 0; n < 500; n++) {
            float a = (float) (rnd.nextGaussian() * 1e3), b = (float) (rnd.nextGaussian() * 1e3);
            assertEquals(a + b, (float) foldFloat(FloatImm.f32(a).add(FloatImm.f32(b))));
            assertEquals(a * b, (float) foldFloat(FloatImm.f32(a).mul(FloatImm.f32(b))));
            assertEquals(a / b, (float) foldFloat(FloatImm.f32(a).div(FloatImm.f32(b))));
            assertEquals(a - b, (float) foldFloat(FloatImm.f32(a).sub(FloatImm.f32(b))));
        }
        // a float32 constant written with a double that is not a float is used as its float value
        assertEquals(0.1f + 0.2f, (float) foldFloat(FloatImm.f32(0.1).add(FloatImm.f32(0.2))));
    }

    @Test
    void float16AndBfloat16RoundHalfToEven() {
        FloatImm one16 = new FloatImm(DType.FLOAT16, 1.0);
        // 1 + 2^-11 is half-way between 1 and 1 + 2^-10: even is 1
        assertEquals(1.0, foldFloat(one16.add(new FloatImm(DType.FLOAT16, 0x1p-11))));
        assertEquals(1.0 + 0x1p-9, foldFloat(one16.add(new FloatImm(DType.FLOAT16, 3 * 0x1p-11))));
        assertEquals(Double.POSITIVE_INFINITY, foldFloat(new FloatImm(DType.FLOAT16, 65504).add(16.0)));
        assertEquals(65504.0, foldFloat(new FloatImm(DType.FLOAT16, 65504).add(15.0)));
        // subnormals: 2^-24 is the smallest; half of it is a tie between 0 and 2^-24, and 0 is even
        FloatImm tiny = new FloatImm(DType.FLOAT16, 0x1p-24);
        assertEquals(0x1p-23, foldFloat(tiny.add(tiny)));
        assertEquals(0.0, foldFloat(tiny.mul(new FloatImm(DType.FLOAT16, 0.5))));
        assertEquals(2 * 0x1p-24, foldFloat(tiny.mul(new FloatImm(DType.FLOAT16, 2.5)))); // 2.5 ulps: tie, 2 is even
        assertEquals(4 * 0x1p-24, foldFloat(tiny.mul(new FloatImm(DType.FLOAT16, 3.5)))); // 3.5 ulps: tie, 4 is even
        // against the JDK's own float -> float16 conversion, on values exact in float
        Random rnd = new Random(3);
        for (int n = 0; n < 500; n++) {
            float a = Float.float16ToFloat(Float.floatToFloat16((float) rnd.nextGaussian()));
            float b = Float.float16ToFloat(Float.floatToFloat16((float) rnd.nextGaussian() * 8));
            float want = Float.float16ToFloat(Float.floatToFloat16(a * b)); // a*b is exact in float
            assertEquals(want, (float) foldFloat(new FloatImm(DType.FLOAT16, a).mul(new FloatImm(DType.FLOAT16, b))));
        }
        FloatImm oneBf = new FloatImm(DType.BFLOAT16, 1.0);
        assertEquals(1.0, foldFloat(oneBf.add(new FloatImm(DType.BFLOAT16, 0x1p-8))));
        assertEquals(1.0 + 0x1p-6, foldFloat(oneBf.add(new FloatImm(DType.BFLOAT16, 3 * 0x1p-8))));
    }

    @Test
    void float64ToFloat16IsRoundedOnceNotThroughFloat() {
        // 1 + 2^-11 + 2^-40 is just above half-way: correct rounding gives 1 + 2^-10; rounding
        // through float32 first would land exactly on the half-way point and give 1.
        double v = 1 + 0x1p-11 + 0x1p-40;
        assertEquals(1 + 0x1p-10, foldFloat(new Cast(DType.FLOAT16, new FloatImm(DType.FLOAT64, v))));
    }

    @Test
    void floatMinMaxFoldsOnlyWhereBackendsAgree() {
        assertEquals(1.5, foldFloat(FloatImm.f32(1.5).min(FloatImm.f32(2.5))));
        assertEquals(2.5, foldFloat(FloatImm.f32(1.5).max(FloatImm.f32(2.5))));
        assertUnchanged("fold-binary", FloatImm.f32(Double.NaN).min(FloatImm.f32(1.0)));
        assertUnchanged("fold-binary", FloatImm.f32(-0.0).max(FloatImm.f32(0.0)));
    }

    @Test
    void comparisons() {
        Expr nan = FloatImm.f32(Double.NaN);
        assertEquals(IntImm.bool(false), fold(nan.eq(nan)));
        assertEquals(IntImm.bool(true), fold(nan.ne(nan)));
        assertEquals(IntImm.bool(false), fold(nan.lt(FloatImm.f32(1))));
        assertEquals(IntImm.bool(false), fold(nan.ge(FloatImm.f32(1))));
        assertEquals(IntImm.bool(true), fold(FloatImm.f32(-0.0).eq(FloatImm.f32(0.0))));
        assertEquals(IntImm.bool(true), fold(IntImm.i32(-3).lt(IntImm.i32(2))));
        assertEquals(IntImm.bool(true), fold(i(DType.UINT8, 200).gt(i(DType.UINT8, 100))));
        assertEquals(IntImm.bool(false), fold(IntImm.i32(2).ne(IntImm.i32(2))));
    }

    @Test
    void logic() {
        Expr t = IntImm.bool(true), f = IntImm.bool(false);
        assertEquals(f, fold(t.and(f)));
        assertEquals(t, fold(t.and(t)));
        assertEquals(t, fold(f.or(t)));
        assertEquals(f, fold(f.or(f)));
        assertEquals(f, fold(t.not()));
        assertEquals(IntImm.i32(4), fold(new Select(f, IntImm.i32(3), IntImm.i32(4))));
    }

    @Test
    void casts() {
        assertEquals(i(DType.INT32, -2), fold(new Cast(DType.INT32, FloatImm.f32(-2.7))));
        assertEquals(i(DType.INT32, Integer.MAX_VALUE), fold(new Cast(DType.INT32, FloatImm.f32(1e20))));
        assertEquals(i(DType.INT32, Integer.MIN_VALUE), fold(new Cast(DType.INT32, FloatImm.f32(-1e20))));
        assertEquals(i(DType.INT32, 0), fold(new Cast(DType.INT32, FloatImm.f32(Double.NaN))));
        assertEquals(i(DType.UINT8, 255), fold(new Cast(DType.UINT8, FloatImm.f32(300.5))));
        assertEquals(i(DType.UINT8, 0), fold(new Cast(DType.UINT8, FloatImm.f32(-5))));
        assertEquals(i(DType.INT8, -56), fold(new Cast(DType.INT8, IntImm.i32(200))));
        assertEquals(i(DType.UINT8, 255), fold(new Cast(DType.UINT8, IntImm.i32(-1))));
        assertEquals(i(DType.INT8, -1), fold(new Cast(DType.INT8, i(DType.UINT8, 255))));
        assertEquals(i(DType.INT64, 200), fold(new Cast(DType.INT64, i(DType.UINT8, 200))));
        assertEquals(IntImm.bool(true), fold(new Cast(DType.BOOL, IntImm.i32(5))));
        assertEquals(IntImm.bool(false), fold(new Cast(DType.BOOL, FloatImm.f32(0.0))));
        assertEquals(IntImm.bool(true), fold(new Cast(DType.BOOL, FloatImm.f32(Double.NaN))));
        assertEquals(FloatImm.f32(1.0), fold(new Cast(DType.FLOAT32, IntImm.bool(true))));
        assertEquals(FloatImm.f32(16777216.0), fold(new Cast(DType.FLOAT32, IntImm.i32(16777217))));
        assertEquals(FloatImm.f32((float) Long.MAX_VALUE), fold(new Cast(DType.FLOAT32, IntImm.i64(Long.MAX_VALUE))));
        assertEquals(FloatImm.f32((float) 0.1), fold(new Cast(DType.FLOAT32, new FloatImm(DType.FLOAT64, 0.1))));
        assertEquals(new FloatImm(DType.FLOAT64, (float) 0.1), fold(new Cast(DType.FLOAT64, FloatImm.f32(0.1))));
    }

    @Test
    void intrinsics() {
        assertEquals(1.0, foldFloat(call(Intrinsic.EXP, FloatImm.f32(0))));
        assertEquals((float) Math.sqrt(2), (float) foldFloat(call(Intrinsic.SQRT, FloatImm.f32(2))));
        assertEquals((float) (1 / Math.sqrt(2)), (float) foldFloat(call(Intrinsic.RSQRT, FloatImm.f32(2))));
        assertEquals((float) Math.log(3), (float) foldFloat(call(Intrinsic.LOG, FloatImm.f32(3))));
        assertEquals((float) Math.tanh(0.5), (float) foldFloat(call(Intrinsic.TANH, FloatImm.f32(0.5))));
        assertEquals((float) (1 / (1 + Math.exp(-0.5))), (float) foldFloat(call(Intrinsic.SIGMOID, FloatImm.f32(0.5))));
        assertEquals(8.0, foldFloat(call(Intrinsic.POW, FloatImm.f32(2), FloatImm.f32(3))));
        assertEquals(2.0, foldFloat(call(Intrinsic.ROUND, FloatImm.f32(2.5))));
        assertEquals(4.0, foldFloat(call(Intrinsic.ROUND, FloatImm.f32(3.5))));
        assertEquals((double) (7f / 255f), foldFloat(call(Intrinsic.EXACT_DIV, FloatImm.f32(7), FloatImm.f32(255))));
        assertEquals(-3.0, foldFloat(call(Intrinsic.FLOOR, FloatImm.f32(-2.5))));
        assertEquals(-2.0, foldFloat(call(Intrinsic.CEIL, FloatImm.f32(-2.5))));
        assertEquals(2.5, foldFloat(call(Intrinsic.ABS, FloatImm.f32(-2.5))));
        float a = 1.1f, b = 3.3f, c = -3.63f;
        assertEquals(Math.fma(a, b, c), (float)
                foldFloat(call(Intrinsic.FMA, FloatImm.f32(a), FloatImm.f32(b), FloatImm.f32(c))));
        assertEquals(i(DType.INT32, 5), fold(call(Intrinsic.ABS, IntImm.i32(-5))));
        assertEquals(i(DType.INT8, -128), fold(call(Intrinsic.ABS, i(DType.INT8, -128)))); // wraps
        assertUnchanged("fold-call", call(Intrinsic.ERF, FloatImm.f32(0.5)));
        Expr h = new FloatImm(DType.FLOAT16, 1.5);
        assertUnchanged("fold-call", call(Intrinsic.FMA, h, h, h));
    }

    @Test
    void foldingFunctionsReturnNullWithoutConstants() {
        assertNull(ConstFold.binary((Binary) new dev.kiln.ir.Var("x").add(1)));
    }

    private static Expr call(Intrinsic fn, Expr... args) {
        return new Call(fn, List.of(args));
    }
}
