package dev.kiln.nn;

import dev.kiln.ir.Expr;
import dev.kiln.ir.KilnException;
import dev.kiln.te.Tensor;
import java.util.stream.Collectors;

/** Argument checks and index helpers shared by the convolution and pooling operators. */
final class ConvChecks {
    private ConvChecks() {}

    /** "conv2d_nhwc: input 'data' must have rank 4 (N, H, W, C), got [1, 2, 3]". */
    static void requireRank(String op, String role, Tensor t, String axes) {
        if (t.rank() != axes.length()) {
            String names = axes.chars().mapToObj(c -> String.valueOf((char) c)).collect(Collectors.joining(", "));
            throw new KilnException(op + ": " + role + " '" + t.name() + "' must have rank " + axes.length() + " ("
                    + names + "), got " + t.shape());
        }
    }

    static void requireSameDType(String op, Tensor data, Tensor weight) {
        if (data.dtype() != weight.dtype()) {
            throw new KilnException(op + ": input '" + data.name() + "' is " + data.dtype() + " but weight '"
                    + weight.name() + "' is " + weight.dtype() + "; cast one of them first");
        }
    }

    /** Checks strides, dilations (positive), padding (non-negative), groups (positive) and the spatial rank. */
    static void checkWindow(String op, ConvParams p, String[] axes) {
        if (p.spatialRank() != axes.length) {
            throw new KilnException(op + ": the params give " + p.spatialRank() + " spatial axes but the operator has "
                    + axes.length + " (" + String.join(", ", axes) + ")");
        }
        for (int i = 0; i < axes.length; i++) {
            checkAxis(op, axes[i], p.stride(i), p.dilation(i), p.padBefore(i), p.padAfter(i));
        }
        if (p.groups() <= 0) throw new KilnException(op + ": groups must be positive, got " + p.groups());
    }

    static void checkAxis(String op, String axis, long stride, long dilation, long padBefore, long padAfter) {
        if (stride <= 0) {
            throw new KilnException(op + ": stride along " + axis + " must be positive, got " + stride);
        }
        if (dilation <= 0) {
            throw new KilnException(op + ": dilation along " + axis + " must be positive, got " + dilation);
        }
        if (padBefore < 0 || padAfter < 0) {
            throw new KilnException(op + ": padding along " + axis + " must be non-negative, got " + padBefore
                    + " before and " + padAfter + " after");
        }
    }

    /** "input 'data' axis 3 (C)". */
    static String axis(String role, Tensor t, int axis, String layout) {
        return role + " '" + t.name() + "' axis " + axis + " (" + layout.charAt(axis) + ")";
    }

    /** {@code o * stride + r * dilation}, leaving out unit factors. */
    static Expr window(Expr o, long stride, Expr r, long dilation) {
        Expr a = stride == 1 ? o : o.mul(stride);
        Expr b = dilation == 1 ? r : r.mul(dilation);
        return a.add(b);
    }

    /** Padding arrays over all axes of a tensor of {@code rank}, non-zero only at the spatial positions. */
    static long[][] padArrays(int rank, int[] spatialPositions, ConvParams p) {
        long[] before = new long[rank];
        long[] after = new long[rank];
        for (int i = 0; i < spatialPositions.length; i++) {
            before[spatialPositions[i]] = p.padBefore(i);
            after[spatialPositions[i]] = p.padAfter(i);
        }
        return new long[][] {before, after};
    }
}
