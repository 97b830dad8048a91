package dev.kiln.nn;

import dev.kiln.ir.KilnException;
import java.util.ArrayList;
import java.util.List;

/**
 * The window of a pooling operator over {@code spatialRank} spatial axes: kernel size, stride,
 * padding before and after each axis, dilation. Entry {@code i} belongs to the {@code i}-th spatial
 * axis in the order of the data layout (H then W). The record checks only that the lists agree in
 * length; the operators check the values and name the axis at fault.
 *
 * <pre>{@code
 * PoolParams p = PoolParams.of(2, 3, 2, 1);             // 3x3 window, stride 2, padding 1
 * PoolParams q = PoolParams.of(2, 2, 2, 0).withDilation(2);
 * }</pre>
 */
public record PoolParams(
        List<Long> kernel, List<Long> strides, List<Long> padBefore, List<Long> padAfter, List<Long> dilations) {
    public PoolParams {
        kernel = List.copyOf(kernel);
        strides = List.copyOf(strides);
        padBefore = List.copyOf(padBefore);
        padAfter = List.copyOf(padAfter);
        dilations = List.copyOf(dilations);
        int r = kernel.size();
        if (r == 0) throw new KilnException("pool params need at least one spatial axis");
        if (strides.size() != r || padBefore.size() != r || padAfter.size() != r || dilations.size() != r) {
            throw new KilnException("pool params: kernel " + kernel + ", strides " + strides + ", padding before "
                    + padBefore + ", padding after " + padAfter + " and dilations " + dilations
                    + " must have one entry per spatial axis (" + r + ")");
        }
    }

    /** A square window {@code kernel} on every axis, stride and symmetric padding, dilation 1. */
    public static PoolParams of(int spatialRank, long kernel, long stride, long pad) {
        if (spatialRank <= 0) throw new KilnException("pool params need at least one spatial axis, got " + spatialRank);
        return new PoolParams(
                ConvParams.fill(spatialRank, kernel),
                ConvParams.fill(spatialRank, stride),
                ConvParams.fill(spatialRank, pad),
                ConvParams.fill(spatialRank, pad),
                ConvParams.fill(spatialRank, 1));
    }

    public int spatialRank() {
        return kernel.size();
    }

    /** One kernel extent for every axis, or one per axis. */
    public PoolParams withKernel(long... k) {
        return new PoolParams(perAxis("kernel", k), strides, padBefore, padAfter, dilations);
    }

    /** One stride for every axis, or one per axis. */
    public PoolParams withStride(long... s) {
        return new PoolParams(kernel, perAxis("stride", s), padBefore, padAfter, dilations);
    }

    /** Symmetric padding: one value for every axis, or one per axis. */
    public PoolParams withPadding(long... pad) {
        List<Long> p = perAxis("padding", pad);
        return new PoolParams(kernel, strides, p, p, dilations);
    }

    /** Padding per side: {@code before[i]} and {@code after[i]} for spatial axis {@code i}. */
    public PoolParams withPadding(long[] before, long[] after) {
        return new PoolParams(
                kernel, strides, exact("padding before", before), exact("padding after", after), dilations);
    }

    /** One dilation for every axis, or one per axis. */
    public PoolParams withDilation(long... d) {
        return new PoolParams(kernel, strides, padBefore, padAfter, perAxis("dilation", d));
    }

    public long kernel(int axis) {
        return kernel.get(axis);
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

    private List<Long> perAxis(String what, long[] v) {
        if (v.length == 1) return ConvParams.fill(spatialRank(), v[0]);
        return exact(what, v);
    }

    private List<Long> exact(String what, long[] v) {
        if (v.length != spatialRank()) {
            throw new KilnException("pool params: " + what + " has " + v.length
                    + " value(s), expected one per spatial axis (" + spatialRank() + ")");
        }
        List<Long> out = new ArrayList<>();
        for (long x : v) out.add(x);
        return out;
    }
}
