package dev.kiln.interp;

import org.apache.commons.math3.special.Erf;

/**
 * Math intrinsics on floats: computed in double with {@link Math} (erf with commons-math3), then
 * rounded to the type. fma on float32 is {@code Math.fma(float, float, float)} (one rounding to
 * float32), on float64 {@code Math.fma(double, double, double)}; on float16 and bfloat16 it is the
 * float64 fma rounded to the type.
 */
final class IntrinsicNodes {
    private IntrinsicNodes() {}

    abstract static class Unary extends DoubleNode {
        final DoubleNode a;
        final int mode;

        Unary(DoubleNode a, int mode) {
            this.a = a;
            this.mode = mode;
        }
    }

    static final class Exp extends Unary {
        Exp(DoubleNode a, int mode) {
            super(a, mode);
        }

        @Override
        double eval(Frame f) {
            return FloatNodes.round(mode, Math.exp(a.eval(f)));
        }
    }

    static final class Log extends Unary {
        Log(DoubleNode a, int mode) {
            super(a, mode);
        }

        @Override
        double eval(Frame f) {
            return FloatNodes.round(mode, Math.log(a.eval(f)));
        }
    }

    static final class Sqrt extends Unary {
        Sqrt(DoubleNode a, int mode) {
            super(a, mode);
        }

        @Override
        double eval(Frame f) {
            return FloatNodes.round(mode, Math.sqrt(a.eval(f)));
        }
    }

    static final class Rsqrt extends Unary {
        Rsqrt(DoubleNode a, int mode) {
            super(a, mode);
        }

        @Override
        double eval(Frame f) {
            return FloatNodes.round(mode, 1.0 / Math.sqrt(a.eval(f)));
        }
    }

    static final class Tanh extends Unary {
        Tanh(DoubleNode a, int mode) {
            super(a, mode);
        }

        @Override
        double eval(Frame f) {
            return FloatNodes.round(mode, Math.tanh(a.eval(f)));
        }
    }

    static final class Sigmoid extends Unary {
        Sigmoid(DoubleNode a, int mode) {
            super(a, mode);
        }

        @Override
        double eval(Frame f) {
            return FloatNodes.round(mode, 1.0 / (1.0 + Math.exp(-a.eval(f))));
        }
    }

    static final class ErfNode extends Unary {
        ErfNode(DoubleNode a, int mode) {
            super(a, mode);
        }

        @Override
        double eval(Frame f) {
            double x = a.eval(f);
            return FloatNodes.round(mode, Double.isNaN(x) ? x : Erf.erf(x));
        }
    }

    static final class Abs extends Unary {
        Abs(DoubleNode a, int mode) {
            super(a, mode);
        }

        @Override
        double eval(Frame f) {
            return Math.abs(a.eval(f));
        }
    }

    static final class Floor extends Unary {
        Floor(DoubleNode a, int mode) {
            super(a, mode);
        }

        @Override
        double eval(Frame f) {
            return Math.floor(a.eval(f));
        }
    }

    static final class Ceil extends Unary {
        Ceil(DoubleNode a, int mode) {
            super(a, mode);
        }

        @Override
        double eval(Frame f) {
            return Math.ceil(a.eval(f));
        }
    }

    /** Round half to even. */
    static final class Round extends Unary {
        Round(DoubleNode a, int mode) {
            super(a, mode);
        }

        @Override
        double eval(Frame f) {
            return Math.rint(a.eval(f));
        }
    }

    static final class Pow extends DoubleNode {
        final DoubleNode a;
        final DoubleNode b;
        final int mode;

        Pow(DoubleNode a, DoubleNode b, int mode) {
            this.a = a;
            this.b = b;
            this.mode = mode;
        }

        @Override
        double eval(Frame f) {
            return FloatNodes.round(mode, Math.pow(a.eval(f), b.eval(f)));
        }
    }

    static final class Fma extends DoubleNode {
        final DoubleNode a;
        final DoubleNode b;
        final DoubleNode c;
        final int mode;

        Fma(DoubleNode a, DoubleNode b, DoubleNode c, int mode) {
            this.a = a;
            this.b = b;
            this.c = c;
            this.mode = mode;
        }

        @Override
        double eval(Frame f) {
            double x = a.eval(f);
            double y = b.eval(f);
            double z = c.eval(f);
            if (mode == FloatNodes.F32) return Math.fma((float) x, (float) y, (float) z);
            return FloatNodes.round(mode, Math.fma(x, y, z));
        }
    }
}
