package dev.kiln.interp;

import dev.kiln.ir.DType;
import dev.kiln.ir.KilnException;
import dev.kiln.runtime.Numerics;

/**
 * Floating arithmetic: computed in double, then rounded to the type (one rounding: float64 holds
 * the exact result of +, -, *, / and sqrt well enough that rounding it again to float32, float16
 * or bfloat16 gives the correctly rounded result). float32 has its own nodes for the hot
 * operators; the others carry a rounding {@code mode}.
 */
final class FloatNodes {
    private FloatNodes() {}

    static final int F64 = 0;
    static final int F32 = 1;
    static final int F16 = 2;
    static final int BF16 = 3;

    static int mode(DType t) {
        return switch (t) {
            case FLOAT64 -> F64;
            case FLOAT32 -> F32;
            case FLOAT16 -> F16;
            case BFLOAT16 -> BF16;
            case INT8, INT16, INT32, INT64, UINT8, BOOL -> throw new KilnException(t + " is not a floating type");
        };
    }

    static double round(int mode, double x) {
        if (mode == F32) return (float) x;
        if (mode == F64) return x;
        return mode == F16 ? Numerics.roundToFloat16(x) : Numerics.roundToBFloat16(x);
    }

    abstract static class Bin extends DoubleNode {
        final DoubleNode a;
        final DoubleNode b;
        final int mode;

        Bin(DoubleNode a, DoubleNode b, int mode) {
            this.a = a;
            this.b = b;
            this.mode = mode;
        }
    }

    static final class Add extends Bin {
        Add(DoubleNode a, DoubleNode b, int mode) {
            super(a, b, mode);
        }

        @Override
        double eval(Frame f) {
            return round(mode, a.eval(f) + b.eval(f));
        }
    }

    static final class Sub extends Bin {
        Sub(DoubleNode a, DoubleNode b, int mode) {
            super(a, b, mode);
        }

        @Override
        double eval(Frame f) {
            return round(mode, a.eval(f) - b.eval(f));
        }
    }

    static final class Mul extends Bin {
        Mul(DoubleNode a, DoubleNode b, int mode) {
            super(a, b, mode);
        }

        @Override
        double eval(Frame f) {
            return round(mode, a.eval(f) * b.eval(f));
        }
    }

    static final class Div extends Bin {
        Div(DoubleNode a, DoubleNode b, int mode) {
            super(a, b, mode);
        }

        @Override
        double eval(Frame f) {
            return round(mode, a.eval(f) / b.eval(f));
        }
    }

    static final class AddF32 extends Bin {
        AddF32(DoubleNode a, DoubleNode b) {
            super(a, b, F32);
        }

        @Override
        double eval(Frame f) {
            return (float) a.eval(f) + (float) b.eval(f);
        }
    }

    static final class SubF32 extends Bin {
        SubF32(DoubleNode a, DoubleNode b) {
            super(a, b, F32);
        }

        @Override
        double eval(Frame f) {
            return (float) a.eval(f) - (float) b.eval(f);
        }
    }

    static final class MulF32 extends Bin {
        MulF32(DoubleNode a, DoubleNode b) {
            super(a, b, F32);
        }

        @Override
        double eval(Frame f) {
            return (float) a.eval(f) * (float) b.eval(f);
        }
    }

    static final class DivF32 extends Bin {
        DivF32(DoubleNode a, DoubleNode b) {
            super(a, b, F32);
        }

        @Override
        double eval(Frame f) {
            return (float) a.eval(f) / (float) b.eval(f);
        }
    }

    /** Smaller operand; NaN if either is NaN; -0 is below +0 (Java's Math.min). */
    static final class Min extends Bin {
        Min(DoubleNode a, DoubleNode b) {
            super(a, b, F64);
        }

        @Override
        double eval(Frame f) {
            return Math.min(a.eval(f), b.eval(f));
        }
    }

    /** Larger operand; NaN if either is NaN; +0 is above -0 (Java's Math.max). */
    static final class Max extends Bin {
        Max(DoubleNode a, DoubleNode b) {
            super(a, b, F64);
        }

        @Override
        double eval(Frame f) {
            return Math.max(a.eval(f), b.eval(f));
        }
    }
}
