package dev.kiln.interp;

/**
 * Comparisons (bool results, 0 or 1), logical operators with short-circuit, and select, which
 * evaluates only the chosen branch. Integer comparisons are on the typed values (uint8 is 0..255);
 * float comparisons are IEEE: any comparison with NaN is false except {@code !=}.
 */
final class LogicNodes {
    private LogicNodes() {}

    abstract static class CmpLong extends LongNode {
        final LongNode a;
        final LongNode b;

        CmpLong(LongNode a, LongNode b) {
            this.a = a;
            this.b = b;
        }
    }

    static final class EqL extends CmpLong {
        EqL(LongNode a, LongNode b) {
            super(a, b);
        }

        @Override
        long eval(Frame f) {
            return a.eval(f) == b.eval(f) ? 1 : 0;
        }
    }

    static final class NeL extends CmpLong {
        NeL(LongNode a, LongNode b) {
            super(a, b);
        }

        @Override
        long eval(Frame f) {
            return a.eval(f) != b.eval(f) ? 1 : 0;
        }
    }

    static final class LtL extends CmpLong {
        LtL(LongNode a, LongNode b) {
            super(a, b);
        }

        @Override
        long eval(Frame f) {
            return a.eval(f) < b.eval(f) ? 1 : 0;
        }
    }

    static final class LeL extends CmpLong {
        LeL(LongNode a, LongNode b) {
            super(a, b);
        }

        @Override
        long eval(Frame f) {
            return a.eval(f) <= b.eval(f) ? 1 : 0;
        }
    }

    static final class GtL extends CmpLong {
        GtL(LongNode a, LongNode b) {
            super(a, b);
        }

        @Override
        long eval(Frame f) {
            return a.eval(f) > b.eval(f) ? 1 : 0;
        }
    }

    static final class GeL extends CmpLong {
        GeL(LongNode a, LongNode b) {
            super(a, b);
        }

        @Override
        long eval(Frame f) {
            return a.eval(f) >= b.eval(f) ? 1 : 0;
        }
    }

    abstract static class CmpDouble extends LongNode {
        final DoubleNode a;
        final DoubleNode b;

        CmpDouble(DoubleNode a, DoubleNode b) {
            this.a = a;
            this.b = b;
        }
    }

    static final class EqD extends CmpDouble {
        EqD(DoubleNode a, DoubleNode b) {
            super(a, b);
        }

        @Override
        long eval(Frame f) {
            return a.eval(f) == b.eval(f) ? 1 : 0;
        }
    }

    static final class NeD extends CmpDouble {
        NeD(DoubleNode a, DoubleNode b) {
            super(a, b);
        }

        @Override
        long eval(Frame f) {
            return a.eval(f) != b.eval(f) ? 1 : 0;
        }
    }

    static final class LtD extends CmpDouble {
        LtD(DoubleNode a, DoubleNode b) {
            super(a, b);
        }

        @Override
        long eval(Frame f) {
            return a.eval(f) < b.eval(f) ? 1 : 0;
        }
    }

    static final class LeD extends CmpDouble {
        LeD(DoubleNode a, DoubleNode b) {
            super(a, b);
        }

        @Override
        long eval(Frame f) {
            return a.eval(f) <= b.eval(f) ? 1 : 0;
        }
    }

    static final class GtD extends CmpDouble {
        GtD(DoubleNode a, DoubleNode b) {
            super(a, b);
        }

        @Override
        long eval(Frame f) {
            return a.eval(f) > b.eval(f) ? 1 : 0;
        }
    }

    static final class GeD extends CmpDouble {
        GeD(DoubleNode a, DoubleNode b) {
            super(a, b);
        }

        @Override
        long eval(Frame f) {
            return a.eval(f) >= b.eval(f) ? 1 : 0;
        }
    }

    static final class And extends LongNode {
        final LongNode a;
        final LongNode b;

        And(LongNode a, LongNode b) {
            this.a = a;
            this.b = b;
        }

        @Override
        long eval(Frame f) {
            return a.eval(f) != 0 ? b.eval(f) : 0;
        }
    }

    static final class Or extends LongNode {
        final LongNode a;
        final LongNode b;

        Or(LongNode a, LongNode b) {
            this.a = a;
            this.b = b;
        }

        @Override
        long eval(Frame f) {
            return a.eval(f) != 0 ? 1 : b.eval(f);
        }
    }

    static final class Not extends LongNode {
        final LongNode a;

        Not(LongNode a) {
            this.a = a;
        }

        @Override
        long eval(Frame f) {
            return a.eval(f) != 0 ? 0 : 1;
        }
    }

    static final class SelectLong extends LongNode {
        final LongNode cond;
        final LongNode t;
        final LongNode e;

        SelectLong(LongNode cond, LongNode t, LongNode e) {
            this.cond = cond;
            this.t = t;
            this.e = e;
        }

        @Override
        long eval(Frame f) {
            return cond.eval(f) != 0 ? t.eval(f) : e.eval(f);
        }
    }

    static final class SelectDouble extends DoubleNode {
        final LongNode cond;
        final DoubleNode t;
        final DoubleNode e;

        SelectDouble(LongNode cond, DoubleNode t, DoubleNode e) {
            this.cond = cond;
            this.t = t;
            this.e = e;
        }

        @Override
        double eval(Frame f) {
            return cond.eval(f) != 0 ? t.eval(f) : e.eval(f);
        }
    }
}
