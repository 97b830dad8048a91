package dev.kiln.nn;

import dev.kiln.ir.DType;
import dev.kiln.ir.KilnException;
import dev.kiln.te.Shape;
import dev.kiln.te.Tensor;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;

/**
 * Argument checks shared by the operators of {@code dev.kiln.nn}: axis normalisation (negative
 * axes count from the end, as in numpy), rank and dtype checks. Every message starts with the
 * operator's name and names the tensor and axis at fault.
 */
final class Axes {
    private Axes() {}

    /** {@code "'A' [2, 3]"}: how messages name a tensor. */
    static String describe(Tensor t) {
        return "'" + t.name() + "' " + t.shape();
    }

    static Tensor requireNonNull(String op, String role, Tensor t) {
        if (t == null) throw new KilnException(op + ": the " + role + " tensor is null");
        return t;
    }

    /** The axis in {@code [0, rank)}; {@code -1} is the last axis. */
    static int normalize(String op, Tensor t, int axis) {
        int r = t.rank();
        if (axis < -r || axis >= r) {
            throw new KilnException(op + ": axis " + axis + " is out of range for tensor " + describe(t) + " of rank "
                    + r + " (valid axes are " + -r + " to " + (r - 1) + ")");
        }
        return axis < 0 ? axis + r : axis;
    }

    /** Normalises several axes and rejects repeats; the result is sorted ascending. */
    static int[] normalizeAll(String op, Tensor t, int... axes) {
        Objects.requireNonNull(axes, "axes");
        int[] out = new int[axes.length];
        for (int i = 0; i < axes.length; i++) out[i] = normalize(op, t, axes[i]);
        int[] sorted = out.clone();
        Arrays.sort(sorted);
        for (int i = 1; i < sorted.length; i++) {
            if (sorted[i] == sorted[i - 1]) {
                throw new KilnException(op + ": axis " + sorted[i] + " of tensor " + describe(t)
                        + " is listed twice in " + Arrays.toString(axes));
            }
        }
        return sorted;
    }

    static void requireRank(String op, Tensor t, int rank) {
        if (t.rank() != rank) {
            throw new KilnException(
                    op + ": tensor " + describe(t) + " has rank " + t.rank() + " but " + rank + " is needed");
        }
    }

    static void requireMinRank(String op, Tensor t, int rank) {
        if (t.rank() < rank) {
            throw new KilnException(
                    op + ": tensor " + describe(t) + " has rank " + t.rank() + " but at least " + rank + " is needed");
        }
    }

    static void requireFloat(String op, Tensor t) {
        if (!t.dtype().isFloat()) {
            throw new KilnException(op + ": tensor " + describe(t) + " is " + t.dtype()
                    + " but a floating type is needed; cast it first");
        }
    }

    static void requireNumeric(String op, Tensor t) {
        if (!t.dtype().isNumeric()) {
            throw new KilnException(op + ": tensor " + describe(t) + " is bool but a numeric type is needed");
        }
    }

    static void requireSameDType(String op, Tensor a, Tensor b) {
        if (a.dtype() != b.dtype()) {
            throw new KilnException(op + ": dtype mismatch: tensor " + describe(a) + " is " + a.dtype() + " but tensor "
                    + describe(b) + " is " + b.dtype() + "; cast one of them first");
        }
    }

    /** A per-channel parameter: rank 1, {@code extent} long, the dtype of {@code x}. */
    static void requireVector(String op, String role, Tensor v, Tensor x, int axis) {
        requireNonNull(op, role, v);
        if (v.rank() != 1 || v.dim(0) != x.dim(axis)) {
            throw new KilnException(op + ": " + role + " tensor " + describe(v) + " must have shape [" + x.dim(axis)
                    + "] to match axis " + axis + " of tensor " + describe(x));
        }
        requireSameDType(op, x, v);
    }

    /** The shape without the given (sorted, distinct) axes, or with them set to 1 if {@code keepdims}. */
    static Shape reducedShape(Shape s, int[] axes, boolean keepdims) {
        List<Long> dims = new ArrayList<>();
        for (int d = 0; d < s.rank(); d++) {
            if (Arrays.binarySearch(axes, d) >= 0) {
                if (keepdims) dims.add(1L);
            } else {
                dims.add(s.get(d));
            }
        }
        return new Shape(dims);
    }

    static boolean contains(int[] sortedAxes, int d) {
        return Arrays.binarySearch(sortedAxes, d) >= 0;
    }

    static void requireDType(String op, Tensor t, DType want) {
        if (t.dtype() != want) {
            throw new KilnException(
                    op + ": tensor " + describe(t) + " is " + t.dtype() + " but " + want + " is needed");
        }
    }
}
