package dev.kiln.interp;

import dev.kiln.ir.DType;
import dev.kiln.runtime.Numerics;

/**
 * Conversions, as documented on {@link dev.kiln.ir.Cast}: float to integer truncates toward zero
 * and saturates (NaN gives 0); integer to integer wraps; anything to bool is {@code x != 0} (NaN
 * gives true); integer to float and float to float round to nearest even, once.
 */
final class CastNodes {
    private CastNodes() {}

    /** Integer or bool to integer: wrap to the target width. */
    static final class Wrap extends LongNode {
        final LongNode a;
        final int sh;
        final boolean uns;

        Wrap(LongNode a, int sh, boolean uns) {
            this.a = a;
            this.sh = sh;
            this.uns = uns;
        }

        @Override
        long eval(Frame f) {
            return IntNodes.wrap(a.eval(f), sh, uns);
        }
    }

    static final class LongToBool extends LongNode {
        final LongNode a;

        LongToBool(LongNode a) {
            this.a = a;
        }

        @Override
        long eval(Frame f) {
            return a.eval(f) != 0 ? 1 : 0;
        }
    }

    static final class DoubleToBool extends LongNode {
        final DoubleNode a;

        DoubleToBool(DoubleNode a) {
            this.a = a;
        }

        @Override
        long eval(Frame f) {
            return a.eval(f) != 0 ? 1 : 0;
        }
    }

    /** Float to integer: truncate toward zero, saturate at [min, max], NaN gives 0. */
    static final class DoubleToLong extends LongNode {
        final DoubleNode a;
        final long min;
        final long max;

        DoubleToLong(DoubleNode a, DType to) {
            this.a = a;
            this.min = to.minInt();
            this.max = to.maxInt();
        }

        @Override
        long eval(Frame f) {
            double x = a.eval(f);
            return Math.min(Math.max((long) x, min), max); // (long) NaN is 0
        }
    }

    /** Integer (or bool 0/1) to float, one rounding. */
    static final class LongToDouble extends DoubleNode {
        final LongNode a;
        final DType to;
        final int mode;

        LongToDouble(LongNode a, DType to) {
            this.a = a;
            this.to = to;
            this.mode = FloatNodes.mode(to);
        }

        @Override
        double eval(Frame f) {
            long v = a.eval(f);
            if (mode == FloatNodes.F32) return (float) v;
            if (mode == FloatNodes.F64) return (double) v;
            return Numerics.intToFloat(to, v);
        }
    }

    /** Float to float: round to the target. */
    static final class Round extends DoubleNode {
        final DoubleNode a;
        final int mode;

        Round(DoubleNode a, int mode) {
            this.a = a;
            this.mode = mode;
        }

        @Override
        double eval(Frame f) {
            return FloatNodes.round(mode, a.eval(f));
        }
    }
}
