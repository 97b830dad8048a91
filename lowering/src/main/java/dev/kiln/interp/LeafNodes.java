package dev.kiln.interp;

/** Constants, variable reads and affine integer expressions. */
final class LeafNodes {
    private LeafNodes() {}

    static final class ConstLong extends LongNode {
        final long value;

        ConstLong(long value) {
            this.value = value;
        }

        @Override
        long eval(Frame f) {
            return value;
        }
    }

    static final class ConstDouble extends DoubleNode {
        final double value;

        ConstDouble(double value) {
            this.value = value;
        }

        @Override
        double eval(Frame f) {
            return value;
        }
    }

    /** An integer or bool variable in slot {@code slot} of {@link Frame#ints}. */
    static final class VarLong extends LongNode {
        final int slot;

        VarLong(int slot) {
            this.slot = slot;
        }

        @Override
        long eval(Frame f) {
            return f.ints[slot];
        }
    }

    /** A floating variable in slot {@code slot} of {@link Frame#floats}. */
    static final class VarDouble extends DoubleNode {
        final int slot;

        VarDouble(int slot) {
            this.slot = slot;
        }

        @Override
        double eval(Frame f) {
            return f.floats[slot];
        }
    }

    /**
     * {@code c + sum(coeff[k] * var[k])} in one node, wrapped to the type at the end. Exact for
     * any tree of +, - and * by constants: arithmetic modulo 2^64 then modulo 2^bits equals
     * wrapping after every operation.
     */
    static final class Affine extends LongNode {
        final long constant;
        final int[] slots;
        final long[] coeffs;
        final int sh;
        final boolean uns;

        Affine(long constant, int[] slots, long[] coeffs, int sh, boolean uns) {
            this.constant = constant;
            this.slots = slots;
            this.coeffs = coeffs;
            this.sh = sh;
            this.uns = uns;
        }

        @Override
        long eval(Frame f) {
            long[] ints = f.ints;
            long v = constant;
            for (int k = 0; k < slots.length; k++) v += coeffs[k] * ints[slots[k]];
            return IntNodes.wrap(v, sh, uns);
        }
    }

    /** {@code c + coeff * var}, the most common affine index. */
    static final class Affine1 extends LongNode {
        final long constant;
        final int slot;
        final long coeff;
        final int sh;
        final boolean uns;

        Affine1(long constant, int slot, long coeff, int sh, boolean uns) {
            this.constant = constant;
            this.slot = slot;
            this.coeff = coeff;
            this.sh = sh;
            this.uns = uns;
        }

        @Override
        long eval(Frame f) {
            return IntNodes.wrap(constant + coeff * f.ints[slot], sh, uns);
        }
    }
}
