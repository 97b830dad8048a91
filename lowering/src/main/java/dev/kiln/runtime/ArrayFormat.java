package dev.kiln.runtime;

import dev.kiln.ir.DType;
import java.util.Arrays;

/** Prints the contents of an {@link NDArray}: {@code float32[2, 3] [[1.0, 2.0, 3.0], [4.0, ...]]}. */
final class ArrayFormat {
    private ArrayFormat() {}

    static String format(NDArray a, int maxElements) {
        long[] shape = a.shape();
        StringBuilder sb = new StringBuilder(a.dtype() + Arrays.toString(shape)).append(' ');
        if (shape.length == 0) return sb.append(value(a, new long[0])).toString();
        dim(a, shape, sb, 0, new long[shape.length], new long[] {Math.max(0, maxElements)});
        return sb.toString();
    }

    /** Appends dimension {@code d}; false once the element budget ran out. */
    private static boolean dim(NDArray a, long[] shape, StringBuilder sb, int d, long[] index, long[] budget) {
        sb.append('[');
        for (long k = 0; k < shape[d]; k++) {
            if (k > 0) sb.append(", ");
            if (budget[0] <= 0) {
                sb.append("...]");
                return false;
            }
            index[d] = k;
            if (d == shape.length - 1) {
                sb.append(value(a, index));
                budget[0]--;
            } else if (!dim(a, shape, sb, d + 1, index, budget)) {
                sb.append(']');
                return false;
            }
        }
        sb.append(']');
        return true;
    }

    private static String value(NDArray a, long[] index) {
        DType t = a.dtype();
        if (t == DType.FLOAT64) return Double.toString(a.getDouble(index));
        if (t.isFloat()) return Float.toString((float) a.getDouble(index));
        if (t.isBool()) return a.getLong(index) != 0 ? "true" : "false";
        return Long.toString(a.getLong(index));
    }
}
