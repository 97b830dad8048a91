package dev.kiln.interp;

import dev.kiln.ir.Binary;
import dev.kiln.ir.ExprPrinter;
import dev.kiln.ir.KilnException;

/**
 * Integer arithmetic. Operands are already reduced to their type; each node computes in 64 bits
 * and wraps the result to the type's width: {@code (v << sh) >> sh} for signed types,
 * {@code (v << sh) >>> sh} for unsigned ones, with {@code sh = 64 - bits}.
 */
final class IntNodes {
    private IntNodes() {}

    static long wrap(long v, int sh, boolean uns) {
        return uns ? (v << sh) >>> sh : (v << sh) >> sh;
    }

    abstract static class Bin extends LongNode {
        final LongNode a;
        final LongNode b;
        final int sh;
        final boolean uns;

        Bin(LongNode a, LongNode b, int sh, boolean uns) {
            this.a = a;
            this.b = b;
            this.sh = sh;
            this.uns = uns;
        }
    }

    static final class Add extends Bin {
        Add(LongNode a, LongNode b, int sh, boolean uns) {
            super(a, b, sh, uns);
        }

        @Override
        long eval(Frame f) {
            return wrap(a.eval(f) + b.eval(f), sh, uns);
        }
    }

    static final class Sub extends Bin {
        Sub(LongNode a, LongNode b, int sh, boolean uns) {
            super(a, b, sh, uns);
        }

        @Override
        long eval(Frame f) {
            return wrap(a.eval(f) - b.eval(f), sh, uns);
        }
    }

    static final class Mul extends Bin {
        Mul(LongNode a, LongNode b, int sh, boolean uns) {
            super(a, b, sh, uns);
        }

        @Override
        long eval(Frame f) {
            return wrap(a.eval(f) * b.eval(f), sh, uns);
        }
    }

    static final class Min extends Bin {
        Min(LongNode a, LongNode b) {
            super(a, b, 0, false);
        }

        @Override
        long eval(Frame f) {
            return Math.min(a.eval(f), b.eval(f));
        }
    }

    static final class Max extends Bin {
        Max(LongNode a, LongNode b) {
            super(a, b, 0, false);
        }

        @Override
        long eval(Frame f) {
            return Math.max(a.eval(f), b.eval(f));
        }
    }

    /** A division or remainder; a zero divisor throws naming the expression and the function. */
    abstract static class Div extends Bin {
        final Binary expr;
        final String function;

        Div(LongNode a, LongNode b, int sh, boolean uns, Binary expr, String function) {
            super(a, b, sh, uns);
            this.expr = expr;
            this.function = function;
        }

        final KilnException byZero(long dividend) {
            return new KilnException("integer division by zero in " + ExprPrinter.print(expr) + " (dividend " + dividend
                    + ") in function '" + function + "'");
        }
    }

    static final class FloorDiv extends Div {
        FloorDiv(LongNode a, LongNode b, int sh, boolean uns, Binary e, String fn) {
            super(a, b, sh, uns, e, fn);
        }

        @Override
        long eval(Frame f) {
            long x = a.eval(f);
            long y = b.eval(f);
            if (y == 0) throw byZero(x);
            return wrap(Math.floorDiv(x, y), sh, uns);
        }
    }

    static final class FloorMod extends Div {
        FloorMod(LongNode a, LongNode b, int sh, boolean uns, Binary e, String fn) {
            super(a, b, sh, uns, e, fn);
        }

        @Override
        long eval(Frame f) {
            long x = a.eval(f);
            long y = b.eval(f);
            if (y == 0) throw byZero(x);
            return wrap(Math.floorMod(x, y), sh, uns);
        }
    }

    static final class TruncDiv extends Div {
        TruncDiv(LongNode a, LongNode b, int sh, boolean uns, Binary e, String fn) {
            super(a, b, sh, uns, e, fn);
        }

        @Override
        long eval(Frame f) {
            long x = a.eval(f);
            long y = b.eval(f);
            if (y == 0) throw byZero(x);
            return wrap(x / y, sh, uns);
        }
    }

    static final class TruncMod extends Div {
        TruncMod(LongNode a, LongNode b, int sh, boolean uns, Binary e, String fn) {
            super(a, b, sh, uns, e, fn);
        }

        @Override
        long eval(Frame f) {
            long x = a.eval(f);
            long y = b.eval(f);
            if (y == 0) throw byZero(x);
            return wrap(x % y, sh, uns);
        }
    }

    /** |x| wrapped to the type: abs(int8 -128) is -128, as in two's complement hardware. */
    static final class Abs extends LongNode {
        final LongNode a;
        final int sh;
        final boolean uns;

        Abs(LongNode a, int sh, boolean uns) {
            this.a = a;
            this.sh = sh;
            this.uns = uns;
        }

        @Override
        long eval(Frame f) {
            return wrap(Math.abs(a.eval(f)), sh, uns);
        }
    }
}
