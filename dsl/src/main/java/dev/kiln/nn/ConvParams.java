package dev.kiln.nn;

import dev.kiln.ir.KilnException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * The window parameters of a convolution over {@code spatialRank} spatial axes: stride, padding
 * before and after each axis (top/left before, bottom/right after), dilation, and the number of
 * groups. Entry {@code i} of each list belongs to the {@code i}-th spatial axis in the order of the
 * data layout (H then W for NHWC and NCHW).
 *
 * <p>The record only checks that the lists agree in length; the operators check the values
 * (positive stride, dilation and groups, non-negative padding) and name the axis at fault.
 *
 * <pre>{@code
 * ConvParams p = ConvParams.of(2, 2, 1).withDilation(2).withGroups(4);   // stride 2, pad 1
 * ConvParams q = ConvParams.of(2, 1, 0).withPadding2d(1, 2, 0, 1);       // top, bottom, left, right
 * }</pre>
 */
public record ConvParams(
        List<Long> strides, List<Long> padBefore, List<Long> padAfter, List<Long> dilations, long groups) {
    public ConvParams {
        strides = List.copyOf(strides);
        padBefore = List.copyOf(padBefore);
        padAfter = List.copyOf(padAfter);
        dilations = List.copyOf(dilations);
        int r = strides.size();
        if (r == 0) throw new KilnException("conv params need at least one spatial axis");
        if (padBefore.size() != r || padAfter.size() != r || dilations.size() != r) {
            throw new KilnException("conv params: strides " + strides + ", padding before " + padBefore
                    + ", padding after " + padAfter + " and dilations " + dilations
                    + " must have one entry per spatial axis (" + r + ")");
        }
    }

    /** Stride {@code stride} and symmetric padding {@code pad} on every axis, dilation 1, one group. */
    public static ConvParams of(int spatialRank, long stride, long pad) {
        if (spatialRank <= 0) throw new KilnException("conv params need at least one spatial axis, got " + spatialRank);
        return new ConvParams(
                fill(spatialRank, stride), fill(spatialRank, pad), fill(spatialRank, pad), fill(spatialRank, 1), 1);
    }

    /** Stride 1, no padding, dilation 1, one group. */
    public static ConvParams defaults(int spatialRank) {
        return of(spatialRank, 1, 0);
    }

    /** Number of spatial axes. */
    public int spatialRank() {
        return strides.size();
    }

    /** One stride for every axis, or one per axis. */
    public ConvParams withStride(long... s) {
        return new ConvParams(perAxis("stride", s), padBefore, padAfter, dilations, groups);
    }

    /** Symmetric padding: one value for every axis, or one per axis. */
    public ConvParams withPadding(long... pad) {
        List<Long> p = perAxis("padding", pad);
        return new ConvParams(strides, p, p, dilations, groups);
    }

    /** Padding per side: {@code before[i]} and {@code after[i]} for spatial axis {@code i}. */
    public ConvParams withPadding(long[] before, long[] after) {
        return new ConvParams(
                strides, exact("padding before", before), exact("padding after", after), dilations, groups);
    }

    /** Padding per side for two spatial axes (H, W). */
    public ConvParams withPadding2d(long top, long bottom, long left, long right) {
        if (spatialRank() != 2) {
            throw new KilnException("withPadding2d needs 2 spatial axes, these params have " + spatialRank());
        }
        return withPadding(new long[] {top, left}, new long[] {bottom, right});
    }

    /** One dilation for every axis, or one per axis. */
    public ConvParams withDilation(long... d) {
        return new ConvParams(strides, padBefore, padAfter, perAxis("dilation", d), groups);
    }

    public ConvParams withGroups(long g) {
        return new ConvParams(strides, padBefore, padAfter, dilations, g);
    }

    public long stride(int axis) {
        return strides.get(axis);
    }

    public long padBefore(int axis) {
        return padBefore.get(axis);
    }

    public long padAfter(int axis) {
        return padAfter.get(axis);
    }

    public long dilation(int axis) {
        return dilations.get(axis);
    }

    /** True when some axis has padding. */
    public boolean hasPadding() {
        for (int i = 0; i < spatialRank(); i++) if (padBefore(i) != 0 || padAfter(i) != 0) return true;
        return false;
    }

    private List<Long> perAxis(String what, long[] v) {
        if (v.length == 1) return fill(spatialRank(), v[0]);
        return exact(what, v);
    }

    private List<Long> exact(String what, long[] v) {
        if (v.length != spatialRank()) {
            throw new KilnException("conv params: " + what + " has " + v.length
                    + " value(s), expected one per spatial axis (" + spatialRank() + ")");
        }
        List<Long> out = new ArrayList<>();
        for (long x : v) out.add(x);
        return out;
    }

    static List<Long> fill(int n, long v) {
        return Collections.nCopies(n, v);
    }
}
