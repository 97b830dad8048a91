package dev.kiln.interp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kiln.ir.Binary;
import dev.kiln.ir.BinaryOp;
import dev.kiln.ir.Compare;
import dev.kiln.ir.CompareOp;
import dev.kiln.ir.DType;
import dev.kiln.ir.FloatImm;
import dev.kiln.ir.IntImm;
import dev.kiln.ir.KilnException;
import dev.kiln.ir.Select;
import dev.kiln.runtime.NDArray;
import dev.kiln.tir.PrimFunc;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Every arithmetic, comparison and logical node on every type against plain Java, on random
 * values over each type's whole range (specials included). Results must match exactly.
 */
class InterpreterArithmeticTest {
    private static final int N = 301;

    @Test
    void integerArithmeticWrapsLikeJava() {
        for (DType t : Ref.INTS) {
            try (NDArray a = Ref.wide(t, 11, N, true);
                    NDArray b = Ref.wide(t, 12, N, true);
                    NDArray d = Ref.nonZero(t, 13, N)) {
                for (BinaryOp op : BinaryOp.values()) {
                    if (op == BinaryOp.DIV) continue;
                    boolean division = op.integerOnly();
                    NDArray rhs = division ? d : b;
                    PrimFunc f =
                            Ref.elementwise("int_" + op, t, List.of(t, t), N, x -> new Binary(op, x.get(0), x.get(1)));
                    try (NDArray out = Ref.run(f, t, N, a, rhs)) {
                        for (int i = 0; i < N; i++) {
                            long x = a.getLongFlat(i);
                            long y = rhs.getLongFlat(i);
                            assertEquals(
                                    intRef(t, op, x, y), out.getLongFlat(i), t + " " + op + "(" + x + ", " + y + ")");
                        }
                    }
                }
            }
        }
    }

    /** Plain Java in the type's own width (int arithmetic narrowed for the small types). */
    private static long intRef(DType t, BinaryOp op, long x, long y) {
        if (t == DType.INT64) {
            return switch (op) {
                case ADD -> x + y;
                case SUB -> x - y;
                case MUL -> x * y;
                case FLOORDIV -> Math.floorDiv(x, y);
                case FLOORMOD -> Math.floorMod(x, y);
                case TRUNCDIV -> x / y;
                case TRUNCMOD -> x % y;
                case MIN -> Math.min(x, y);
                case MAX -> Math.max(x, y);
                case DIV -> throw new IllegalArgumentException();
            };
        }
        int a = (int) x;
        int b = (int) y;
        int r =
                switch (op) {
                    case ADD -> a + b;
                    case SUB -> a - b;
                    case MUL -> a * b;
                    case FLOORDIV -> Math.floorDiv(a, b);
                    case FLOORMOD -> Math.floorMod(a, b);
                    case TRUNCDIV -> a / b;
                    case TRUNCMOD -> a % b;
                    case MIN -> Math.min(a, b);
                    case MAX -> Math.max(a, b);
                    case DIV -> throw new IllegalArgumentException();
                };
        return switch (t) {
            case INT8 -> (byte) r;
            case INT16 -> (short) r;
            case UINT8 -> r & 0xFF;
            default -> r;
        };
    }

    @Test
    void integerIntermediatesWrapBeforeTheNextOperation() {
        for (DType t : Ref.INTS) {
            try (NDArray a = Ref.wide(t, 14, N, true);
                    NDArray b = Ref.wide(t, 15, N, true)) {
                PrimFunc lt = Ref.elementwise("lt", DType.BOOL, List.of(t, t), N, x -> x.get(0)
                        .add(x.get(1))
                        .lt(x.get(0)));
                PrimFunc div = Ref.elementwise(
                        "div", t, List.of(t, t), N, x -> x.get(0).mul(x.get(1)).floordiv(3));
                PrimFunc max = Ref.elementwise(
                        "max", t, List.of(t, t), N, x -> x.get(0).sub(x.get(1)).max(0));
                PrimFunc aff = Ref.elementwise("aff", DType.BOOL, List.of(t), N, x -> x.get(0)
                        .mul(3)
                        .add(1)
                        .gt(x.get(0)));
                try (NDArray o1 = Ref.run(lt, DType.BOOL, N, a, b);
                        NDArray o2 = Ref.run(div, t, N, a, b);
                        NDArray o3 = Ref.run(max, t, N, a, b);
                        NDArray o4 = Ref.run(aff, DType.BOOL, N, a)) {
                    for (int i = 0; i < N; i++) {
                        long x = a.getLongFlat(i);
                        long y = b.getLongFlat(i);
                        String at = t + " at " + i + " (" + x + ", " + y + ")";
                        assertEquals(intRef(t, BinaryOp.ADD, x, y) < x ? 1 : 0, o1.getLongFlat(i), at);
                        assertEquals(
                                intRef(t, BinaryOp.FLOORDIV, intRef(t, BinaryOp.MUL, x, y), 3), o2.getLongFlat(i), at);
                        assertEquals(Math.max(intRef(t, BinaryOp.SUB, x, y), 0), o3.getLongFlat(i), at);
                        long affine = intRef(t, BinaryOp.ADD, intRef(t, BinaryOp.MUL, x, 3), 1);
                        assertEquals(affine > x ? 1 : 0, o4.getLongFlat(i), at);
                    }
                }
            }
        }
    }

    @Test
    void floorAndTruncDivisionOnNegativeNumbers() {
        long[][] cases = { // a, b, floordiv, floormod, truncdiv, truncmod
            {7, 2, 3, 1, 3, 1}, {-7, 2, -4, 1, -3, -1}, {7, -2, -4, -1, -3, 1}, {-7, -2, 3, -1, 3, -1},
            {-8, 4, -2, 0, -2, 0}, {-1, 5, -1, 4, 0, -1}, {0, -3, 0, 0, 0, 0}, {-128, -1, 128, 0, 128, 0},
        };
        BinaryOp[] ops = {BinaryOp.FLOORDIV, BinaryOp.FLOORMOD, BinaryOp.TRUNCDIV, BinaryOp.TRUNCMOD};
        for (DType t : new DType[] {DType.INT8, DType.INT32, DType.INT64}) {
            long[] as = new long[cases.length];
            long[] bs = new long[cases.length];
            for (int c = 0; c < cases.length; c++) {
                as[c] = cases[c][0];
                bs[c] = cases[c][1];
            }
            try (NDArray a = NDArray.fromLongs(t, as, as.length);
                    NDArray b = NDArray.fromLongs(t, bs, bs.length)) {
                for (int o = 0; o < ops.length; o++) {
                    BinaryOp op = ops[o];
                    PrimFunc f = Ref.elementwise(
                            "div", t, List.of(t, t), as.length, x -> new Binary(op, x.get(0), x.get(1)));
                    try (NDArray out = Ref.run(f, t, as.length, a, b)) {
                        for (int c = 0; c < cases.length; c++) {
                            // -128 / -1 = 128 wraps to -128 in int8
                            long expected = Ref.wrap(t, cases[c][2 + o]);
                            assertEquals(expected, out.getLongFlat(c), t + " " + op + "(" + as[c] + ", " + bs[c] + ")");
                        }
                    }
                }
            }
        }
    }

    @Test
    void integerDivisionByZeroNamesTheExpression() {
        for (BinaryOp op :
                new BinaryOp[] {BinaryOp.FLOORDIV, BinaryOp.FLOORMOD, BinaryOp.TRUNCDIV, BinaryOp.TRUNCMOD}) {
            PrimFunc f = Ref.elementwise(
                    "divz", DType.INT32, List.of(DType.INT32, DType.INT32), 3, x -> new Binary(op, x.get(0), x.get(1)));
            try (NDArray a = NDArray.fromInts(new int[] {5, 6, 7}, 3);
                    NDArray b = NDArray.fromInts(new int[] {1, 0, 2}, 3);
                    NDArray out = NDArray.allocate(DType.INT32, 3)) {
                KilnException e = assertThrows(KilnException.class, () -> Interpreter.run(f, a, b, out));
                assertTrue(
                        e.getMessage().contains("division by zero in " + op.symbol() + "(in0[i], in1[i])"),
                        e.getMessage());
                assertTrue(
                        e.getMessage().contains("function 'divz'")
                                && e.getMessage().contains("dividend 6"),
                        e.getMessage());
                assertEquals(intRef(DType.INT32, op, 5, 1), out.getLong(0), "the element before the error was written");
            }
        }
    }

    @Test
    void floatArithmeticRoundsToTheTypeAfterEveryOperation() {
        BinaryOp[] ops = {BinaryOp.ADD, BinaryOp.SUB, BinaryOp.MUL, BinaryOp.DIV, BinaryOp.MIN, BinaryOp.MAX};
        for (DType t : Ref.FLOATS) {
            try (NDArray a = Ref.wide(t, 21, N, true);
                    NDArray b = Ref.wide(t, 22, N, false)) {
                b.setDoubleFlat(Double.NaN, 7);
                b.setDoubleFlat(-0.0, 8);
                b.setDoubleFlat(0.0, 9);
                for (BinaryOp op : ops) {
                    PrimFunc f =
                            Ref.elementwise("f_" + op, t, List.of(t, t), N, x -> new Binary(op, x.get(0), x.get(1)));
                    try (NDArray out = Ref.run(f, t, N, a, b)) {
                        for (int i = 0; i < N; i++) {
                            double x = a.getDoubleFlat(i);
                            double y = b.getDoubleFlat(i);
                            Ref.assertSame(
                                    floatRef(t, op, x, y),
                                    out.getDoubleFlat(i),
                                    t + " " + op + "(" + x + ", " + y + ")");
                        }
                    }
                }
            }
        }
    }

    /**
     * Native arithmetic of the type: Java float for float32, double for float64, and for the 16-bit
     * types a float operation rounded to the type (the float result is exact enough).
     */
    private static double floatRef(DType t, BinaryOp op, double x, double y) {
        if (op == BinaryOp.MIN) return Math.min(x, y);
        if (op == BinaryOp.MAX) return Math.max(x, y);
        if (t == DType.FLOAT64) {
            return switch (op) {
                case ADD -> x + y;
                case SUB -> x - y;
                case MUL -> x * y;
                default -> x / y;
            };
        }
        float a = (float) x;
        float b = (float) y;
        float r =
                switch (op) {
                    case ADD -> a + b;
                    case SUB -> a - b;
                    case MUL -> a * b;
                    default -> a / b;
                };
        return switch (t) {
            case FLOAT32 -> r;
            case FLOAT16 -> Float.float16ToFloat(Float.floatToFloat16(r));
            default -> Ref.round(DType.BFLOAT16, r);
        };
    }

    @Test
    void floatMinMaxPropagateNaN() {
        PrimFunc min = Ref.elementwise("mn", DType.FLOAT32, List.of(DType.FLOAT32, DType.FLOAT32), 3, x -> x.get(0)
                .min(x.get(1)));
        PrimFunc max = Ref.elementwise("mx", DType.FLOAT32, List.of(DType.FLOAT32, DType.FLOAT32), 3, x -> x.get(0)
                .max(x.get(1)));
        try (NDArray a = NDArray.fromFloats(new float[] {Float.NaN, 1f, -0f}, 3);
                NDArray b = NDArray.fromFloats(new float[] {2f, Float.NaN, 0f}, 3);
                NDArray lo = Ref.run(min, DType.FLOAT32, 3, a, b);
                NDArray hi = Ref.run(max, DType.FLOAT32, 3, a, b)) {
            assertTrue(Double.isNaN(lo.getDouble(0)) && Double.isNaN(lo.getDouble(1)));
            assertTrue(Double.isNaN(hi.getDouble(0)) && Double.isNaN(hi.getDouble(1)));
            Ref.assertSame(-0.0, lo.getDouble(2), "min(-0, 0)");
            Ref.assertSame(0.0, hi.getDouble(2), "max(-0, 0)");
        }
    }

    @Test
    void constantsAreRoundedToTheirType() {
        for (DType t : Ref.FLOATS) {
            PrimFunc f = Ref.elementwise("c", t, List.of(t), N, x -> x.get(0).add(new FloatImm(t, 0.1)));
            try (NDArray a = Ref.wide(t, 31, N, true);
                    NDArray out = Ref.run(f, t, N, a)) {
                double c = Ref.round(t, 0.1);
                for (int i = 0; i < N; i++) {
                    double x = a.getDoubleFlat(i);
                    double expected = t == DType.FLOAT64 ? x + c : Ref.round(t, (float) x + (float) c);
                    Ref.assertSame(expected, out.getDoubleFlat(i), t + ": " + x + " + 0.1");
                }
            }
        }
        // an affine integer expression with constants only folds with wrapping
        PrimFunc g = Ref.elementwise("k", DType.INT8, List.of(DType.INT8), 4, x -> x.get(0)
                .add(new Binary(BinaryOp.MUL, new IntImm(DType.INT8, 100), new IntImm(DType.INT8, 3))));
        try (NDArray a = NDArray.fromLongs(DType.INT8, new long[] {0, 1, -1, 100}, 4);
                NDArray out = Ref.run(g, DType.INT8, 4, a)) {
            for (int i = 0; i < 4; i++) assertEquals((byte) (a.getLongFlat(i) + (byte) 300), out.getLongFlat(i));
        }
    }

    @Test
    void comparisonsOnEveryType() {
        for (DType t : DType.values()) {
            try (NDArray a = Ref.wide(t, 41, N, true);
                    NDArray b = Ref.wide(t, 42, N, true)) {
                for (int i = 0; i < N; i += 3) b.setDoubleFlat(a.getDoubleFlat(i), i); // some equal pairs
                for (CompareOp op : CompareOp.values()) {
                    PrimFunc f = Ref.elementwise(
                            "cmp", DType.BOOL, List.of(t, t), N, x -> new Compare(op, x.get(0), x.get(1)));
                    try (NDArray out = Ref.run(f, DType.BOOL, N, a, b)) {
                        for (int i = 0; i < N; i++) {
                            boolean expected = t.isFloat()
                                    ? cmp(op, a.getDoubleFlat(i), b.getDoubleFlat(i))
                                    : cmp(op, a.getLongFlat(i), b.getLongFlat(i));
                            assertEquals(expected ? 1 : 0, out.getLongFlat(i), t + " " + op + " at " + i);
                        }
                    }
                }
            }
        }
    }

    private static boolean cmp(CompareOp op, double x, double y) {
        return switch (op) {
            case EQ -> x == y;
            case NE -> x != y;
            case LT -> x < y;
            case LE -> x <= y;
            case GT -> x > y;
            case GE -> x >= y;
        };
    }

    private static boolean cmp(CompareOp op, long x, long y) {
        return switch (op) {
            case EQ -> x == y;
            case NE -> x != y;
            case LT -> x < y;
            case LE -> x <= y;
            case GT -> x > y;
            case GE -> x >= y;
        };
    }

    @Test
    void logicAndSelectOnEveryType() {
        try (NDArray p = Ref.wide(DType.BOOL, 51, N, false);
                NDArray q = Ref.wide(DType.BOOL, 52, N, false)) {
            PrimFunc and = Ref.elementwise("and", DType.BOOL, List.of(DType.BOOL, DType.BOOL), N, x -> x.get(0)
                    .and(x.get(1)));
            PrimFunc or = Ref.elementwise("or", DType.BOOL, List.of(DType.BOOL, DType.BOOL), N, x -> x.get(0)
                    .or(x.get(1)));
            PrimFunc not = Ref.elementwise(
                    "not", DType.BOOL, List.of(DType.BOOL), N, x -> x.get(0).not());
            try (NDArray a = Ref.run(and, DType.BOOL, N, p, q);
                    NDArray o = Ref.run(or, DType.BOOL, N, p, q);
                    NDArray n = Ref.run(not, DType.BOOL, N, p)) {
                for (int i = 0; i < N; i++) {
                    boolean x = p.getLongFlat(i) != 0;
                    boolean y = q.getLongFlat(i) != 0;
                    assertEquals(x && y ? 1 : 0, a.getLongFlat(i));
                    assertEquals(x || y ? 1 : 0, o.getLongFlat(i));
                    assertEquals(x ? 0 : 1, n.getLongFlat(i));
                }
            }
            for (DType t : DType.values()) {
                PrimFunc sel = Ref.elementwise(
                        "sel", t, List.of(DType.BOOL, t, t), N, x -> new Select(x.get(0), x.get(1), x.get(2)));
                try (NDArray a = Ref.wide(t, 53, N, true);
                        NDArray b = Ref.wide(t, 54, N, true);
                        NDArray out = Ref.run(sel, t, N, p, a, b)) {
                    for (int i = 0; i < N; i++) {
                        double expected = p.getLongFlat(i) != 0 ? a.getDoubleFlat(i) : b.getDoubleFlat(i);
                        Ref.assertSame(expected, out.getDoubleFlat(i), t + " select at " + i);
                    }
                }
            }
        }
    }
}
