package dev.kiln.runtime;

import dev.kiln.ir.DType;
import dev.kiln.ir.KilnException;
import java.util.Arrays;

/**
 * The shape and stride arithmetic of {@link NDArray}: row-major strides, the checks on a layout, the
 * elements and bytes it spans, with a {@link KilnException} naming the shape wherever a count would
 * overflow a long.
 */
final class ArrayLayout {
    private ArrayLayout() {}

    /** Row-major strides of a shape, in elements. */
    static long[] rowMajorStrides(long... shape) {
        requireShape("rowMajorStrides", shape);
        long[] st = new long[shape.length];
        long s = 1;
        for (int d = shape.length - 1; d >= 0; d--) {
            st[d] = s;
            try {
                s = Math.multiplyExact(s, Math.max(shape[d], 1));
            } catch (ArithmeticException e) {
                throw new KilnException(
                        "array shape " + Arrays.toString(shape) + " has more elements than a long can count");
            }
        }
        return st;
    }

    static String describe(DType dtype, long[] shape) {
        return dtype + Arrays.toString(shape);
    }

    static void requireShape(String where, long[] shape) {
        if (shape == null) throw new KilnException(where + ": the shape is null");
    }

    /** Bytes an array of this layout spans, or a KilnException naming the shape if that overflows a long. */
    static long bytes(DType dtype, long[] shape, long[] strides) {
        try {
            return Math.multiplyExact(span(shape, strides), (long) dtype.bytes());
        } catch (ArithmeticException e) {
            throw new KilnException("array " + describe(dtype, shape) + " with strides " + Arrays.toString(strides)
                    + " spans more bytes than a long can count");
        }
    }

    static void check(DType dtype, long[] shape, long[] strides) {
        if (dtype == null) throw new KilnException("an array needs a dtype");
        if (shape.length != strides.length) {
            throw new KilnException(
                    "shape " + Arrays.toString(shape) + " and strides " + Arrays.toString(strides) + " differ in rank");
        }
        for (int d = 0; d < shape.length; d++) {
            if (shape[d] < 0) {
                throw new KilnException(
                        "array shape " + Arrays.toString(shape) + " has negative extent at dimension " + d);
            }
            if (strides[d] < 0) {
                throw new KilnException(
                        "array strides " + Arrays.toString(strides) + " have a negative stride at dimension " + d);
            }
        }
        count(shape);
    }

    /** Elements spanned in memory: 1 + sum((shape - 1) * stride), or 0 for an empty array. */
    static long span(long[] shape, long[] strides) {
        long last = 0;
        for (int d = 0; d < shape.length; d++) {
            if (shape[d] == 0) return 0;
            last = Math.addExact(last, Math.multiplyExact(shape[d] - 1, strides[d]));
        }
        return last + 1;
    }

    static long count(long[] shape) {
        long n = 1;
        for (long s : shape) {
            try {
                n = Math.multiplyExact(n, s);
            } catch (ArithmeticException e) {
                throw new KilnException(
                        "array shape " + Arrays.toString(shape) + " has more elements than a long can count");
            }
        }
        return n;
    }
}
