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

        // the first five terms in scalar fields (unused ones read slot 0 times 0), the rest from the arrays
        final int s0, s1, s2, s3, s4;
        final long c0, c1, c2, c3, c4;

        Affine(long constant, int[] slots, long[] coeffs, int sh, boolean uns) {
            this.constant = constant;
            this.slots = slots;
            this.coeffs = coeffs;
            this.sh = sh;
            this.uns = uns;
            int n = slots.length;
            s0 = n > 0 ? slots[0] : 0;
            s1 = n > 1 ? slots[1] : 0;
            s2 = n > 2 ? slots[2] : 0;
            s3 = n > 3 ? slots[3] : 0;
            s4 = n > 4 ? slots[4] : 0;
            c0 = n > 0 ? coeffs[0] : 0;
            c1 = n > 1 ? coeffs[1] : 0;
            c2 = n > 2 ? coeffs[2] : 0;
            c3 = n > 3 ? coeffs[3] : 0;
            c4 = n > 4 ? coeffs[4] : 0;
        }

        @Override
        long eval(Frame f) {
            long[] ints = f.ints;
            long v = constant + c0 * ints[s0] + c1 * ints[s1] + c2 * ints[s2] + c3 * ints[s3] + c4 * ints[s4];
            for (int k = 5; k < slots.length; k++) v += coeffs[k] * ints[slots[k]];
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

    /**
     * {@code c + sum(coeff[k] * var[k]) + sum(table[j][var[j] - min[j]])}, wrapped to the type at the end: an affine
     * form whose atoms ({@code floordiv(rc, 4)}, {@code floormod(o, 16)}) were tabulated over their loop's range, each
     * variable's own term folded into its table. A variable outside its table's range (a value no loop over that
     * range gives) evaluates the expression's generic node instead, so the result is always the expression's.
     */
    static final class Tabulated extends LongNode {
        final long constant;
        final int[] slots;
        final long[] coeffs;
        final int[] tabSlots;
        final long[] mins;
        final long[][] tables;
        final LongNode generic;
        final Affine linear; // the terms without tables (wrapped at shift 0: not at all)
        final int sh;
        final boolean uns;

        Tabulated(
                long constant,
                int[] slots,
                long[] coeffs,
                int[] tabSlots,
                long[] mins,
                long[][] tables,
                LongNode generic,
                int sh,
                boolean uns) {
            this.constant = constant;
            this.slots = slots;
            this.coeffs = coeffs;
            this.tabSlots = tabSlots;
            this.mins = mins;
            this.tables = tables;
            this.generic = generic;
            this.sh = sh;
            this.uns = uns;
            this.linear = slots.length == 0 ? null : new Affine(0, slots, coeffs, 0, false);
        }

        @Override
        long eval(Frame f) {
            long[] ints = f.ints;
            long v = constant;
            if (linear != null) v += linear.eval(f);
            for (int j = 0; j < tabSlots.length; j++) {
                long[] table = tables[j];
                long x = ints[tabSlots[j]] - mins[j];
                if (x < 0 || x >= table.length) return generic.eval(f);
                v += table[(int) x];
            }
            return IntNodes.wrap(v, sh, uns);
        }
    }
}
