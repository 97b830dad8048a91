package dev.kiln.nn;

import dev.kiln.ir.DType;
import dev.kiln.ir.Expr;
import dev.kiln.ir.IterVar;
import dev.kiln.ir.KilnException;
import dev.kiln.te.Shape;
import dev.kiln.te.Te;
import dev.kiln.te.Tensor;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Operators that move elements without arithmetic: reshape (row-major, same element count),
 * transpose by a permutation of the axes, and flatten. Each is one compute stage named after it
 * and tagged {@link #TAG}.
 */
public final class Layout {
    private Layout() {}

    /** The tag of the stages built here. */
    public static final String TAG = "injective";

    /**
     * The same elements in row-major order under a new shape. One extent may be {@code -1}: it
     * is inferred from the element count. Throws naming both shapes if the counts differ.
     */
    @Operator("The same elements in row-major order under a new shape.")
    public static Tensor reshape(Tensor x, long... newShape) {
        Axes.requireNonNull("reshape", "input", x);
        Shape target = inferShape(x, newShape);
        return reshapeTo("reshape", x, target);
    }

    /** Reverses the order of the axes. */
    @Operator("Permutes the axes (reverses them when no permutation is given).")
    public static Tensor transpose(Tensor x) {
        Axes.requireNonNull("transpose", "input", x);
        int[] perm = new int[x.rank()];
        for (int d = 0; d < perm.length; d++) perm[d] = perm.length - 1 - d;
        return transpose(x, perm);
    }

    /**
     * {@code out} has axis {@code d} = axis {@code perm[d]} of {@code x}:
     * {@code out.shape[d] = x.shape[perm[d]]}. Negative entries count from the end. Throws if
     * {@code perm} is not a permutation of the axes of {@code x}.
     */
    public static Tensor transpose(Tensor x, int... perm) {
        Axes.requireNonNull("transpose", "input", x);
        if (perm.length != x.rank()) {
            throw new KilnException("transpose: permutation " + Arrays.toString(perm) + " has " + perm.length
                    + " entries but tensor " + Axes.describe(x) + " has rank " + x.rank());
        }
        int[] p = new int[perm.length];
        boolean[] seen = new boolean[perm.length];
        for (int d = 0; d < perm.length; d++) {
            if (perm[d] < -x.rank() || perm[d] >= x.rank()) {
                throw new KilnException("transpose: permutation " + Arrays.toString(perm) + " names axis " + perm[d]
                        + ", out of range for tensor " + Axes.describe(x) + " of rank " + x.rank());
            }
            p[d] = perm[d] < 0 ? perm[d] + x.rank() : perm[d];
            if (seen[p[d]]) {
                throw new KilnException("transpose: permutation " + Arrays.toString(perm) + " names axis " + p[d]
                        + " of tensor " + Axes.describe(x) + " twice; it must list every axis once");
            }
            seen[p[d]] = true;
        }
        long[] dims = new long[p.length];
        for (int d = 0; d < p.length; d++) dims[d] = x.dim(p[d]);
        return Te.computeN("transpose", TAG, Shape.of(dims), idx -> {
            Expr[] in = new Expr[p.length];
            for (int d = 0; d < p.length; d++) in[p[d]] = idx.get(d);
            return x.at(in);
        });
    }

    /**
     * Strided slice: {@code out[i_0, ...] = x[begin_0 + i_0 * step_0, ...]} with {@code size[d]}
     * elements on axis d ({@code step} may be negative; every read must stay inside x).
     */
    @Operator("`out[i, ...] = x[begin + i * step, ...]` with `size[d]` elements on axis d.")
    public static Tensor stridedSlice(Tensor x, long[] begin, long[] step, long[] size) {
        Axes.requireNonNull("strided_slice", "input", x);
        if (begin.length != x.rank() || step.length != x.rank() || size.length != x.rank()) {
            throw new KilnException("strided_slice: tensor " + Axes.describe(x) + " needs " + x.rank()
                    + " begins, steps and sizes, got " + Arrays.toString(begin) + ", " + Arrays.toString(step)
                    + ", " + Arrays.toString(size));
        }
        for (int d = 0; d < x.rank(); d++) {
            long last = begin[d] + (size[d] - 1) * step[d];
            if (step[d] == 0 || size[d] < 1 || begin[d] < 0 || begin[d] >= x.dim(d) || last < 0 || last >= x.dim(d)) {
                throw new KilnException("strided_slice: axis " + d + " of tensor " + Axes.describe(x) + " (extent "
                        + x.dim(d) + ") cannot give " + size[d] + " element(s) from " + begin[d] + " in steps of "
                        + step[d]);
            }
        }
        return Te.computeN("strided_slice", TAG, Shape.of(size), idx -> {
            Expr[] in = new Expr[idx.size()];
            for (int d = 0; d < in.length; d++) {
                Expr i = step[d] == 1 ? idx.get(d) : idx.get(d).mul(step[d]);
                in[d] = begin[d] == 0 ? i : i.add(begin[d]);
            }
            return x.at(in);
        });
    }

    /** Keeps axis 0 and merges the others: {@code [N, C, H, W] -> [N, C*H*W]} (TVM's batch_flatten). */
    @Operator("Merges axes into one: all but the first (TVM's batch_flatten), or a given range.")
    public static Tensor flatten(Tensor x) {
        Axes.requireNonNull("flatten", "input", x);
        if (x.rank() == 1) return flatten(x, 0, 0);
        return flatten(x, 1, -1);
    }

    /** Merges axes {@code startAxis..endAxis} (inclusive; negative counts from the end) into one. */
    public static Tensor flatten(Tensor x, int startAxis, int endAxis) {
        Axes.requireNonNull("flatten", "input", x);
        int s = Axes.normalize("flatten", x, startAxis);
        int e = Axes.normalize("flatten", x, endAxis);
        if (s > e) {
            throw new KilnException("flatten: start axis " + startAxis + " comes after end axis " + endAxis
                    + " of tensor " + Axes.describe(x));
        }
        List<Long> dims = new ArrayList<>();
        for (int d = 0; d < s; d++) dims.add(x.dim(d));
        long merged = 1;
        for (int d = s; d <= e; d++) merged *= x.dim(d);
        dims.add(merged);
        for (int d = e + 1; d < x.rank(); d++) dims.add(x.dim(d));
        return reshapeTo("flatten", x, new Shape(dims));
    }

    /**
     * Joins tensors along {@code axis} (negative counts from the end): every other axis must have
     * the same extent in all of them, and they must share a dtype. One stage {@code concat} that
     * reads, for each output point, the one input whose slice holds it.
     */
    @Operator("Joins tensors of one dtype along `axis`.")
    public static Tensor concat(int axis, Tensor... xs) {
        if (xs == null || xs.length == 0) throw new KilnException("concat: needs at least one input tensor");
        for (int i = 0; i < xs.length; i++) Axes.requireNonNull("concat", "input " + i, xs[i]);
        Tensor first = xs[0];
        int ax = Axes.normalize("concat", first, axis);
        long[] offsets = new long[xs.length + 1];
        for (int i = 0; i < xs.length; i++) {
            Tensor x = xs[i];
            if (x.rank() != first.rank() || x.dtype() != first.dtype()) {
                throw new KilnException("concat: input " + i + " " + Axes.describe(x) + " does not match input 0 "
                        + Axes.describe(first) + " in rank and dtype");
            }
            for (int d = 0; d < x.rank(); d++) {
                if (d != ax && x.dim(d) != first.dim(d)) {
                    throw new KilnException("concat: axis " + d + " of input " + i + " " + Axes.describe(x)
                            + " has extent " + x.dim(d) + " but input 0 " + Axes.describe(first) + " has "
                            + first.dim(d) + "; only the concatenation axis " + ax + " may differ");
                }
            }
            offsets[i + 1] = offsets[i] + x.dim(ax);
        }
        long[] dims = first.shape().toArray();
        dims[ax] = offsets[xs.length];
        return Te.computeN("concat", TAG, Shape.of(dims), idx -> {
            Expr out = null;
            for (int i = xs.length - 1; i >= 0; i--) {
                List<Expr> src = new ArrayList<>(idx);
                src.set(ax, offsets[i] == 0 ? idx.get(ax) : idx.get(ax).sub(offsets[i]));
                Expr read = xs[i].at(src);
                out = out == null ? read : Te.select(idx.get(ax).lt(offsets[i + 1]), read, out);
            }
            return out;
        });
    }

    private static Shape inferShape(Tensor x, long[] newShape) {
        long total = x.shape().numElements();
        int unknown = -1;
        long known = 1;
        for (int d = 0; d < newShape.length; d++) {
            if (newShape[d] == -1) {
                if (unknown >= 0) {
                    throw new KilnException("reshape: target shape " + Arrays.toString(newShape) + " for tensor "
                            + Axes.describe(x) + " has more than one -1 extent");
                }
                unknown = d;
            } else if (newShape[d] <= 0) {
                throw new KilnException("reshape: target shape " + Arrays.toString(newShape) + " for tensor "
                        + Axes.describe(x) + " has a non-positive extent " + newShape[d] + " at axis " + d);
            } else {
                known = Math.multiplyExact(known, newShape[d]);
            }
        }
        long[] dims = newShape.clone();
        if (unknown >= 0) {
            if (total % known != 0) throw countMismatch(x, newShape, total);
            dims[unknown] = total / known;
        }
        Shape s = Shape.of(dims);
        if (s.numElements() != total) throw countMismatch(x, newShape, total);
        return s;
    }

    private static KilnException countMismatch(Tensor x, long[] newShape, long total) {
        return new KilnException("reshape: cannot reshape tensor " + Axes.describe(x) + " (" + total
                + " elements) to shape " + Arrays.toString(newShape) + ": the element counts differ");
    }

    /** Row-major reshape: linearise the output index, then split it along the input's extents. */
    private static Tensor reshapeTo(String op, Tensor x, Shape target) {
        boolean wide = target.numElements() > Integer.MAX_VALUE;
        return Te.computeN(op, TAG, target, idx -> {
            Expr linear = null;
            for (int d = 0; d < idx.size(); d++) {
                Expr i = index(idx.get(d), wide);
                linear = linear == null ? i : linear.mul(target.get(d)).add(i);
            }
            if (linear == null) linear = wide ? Te.i64(0) : Te.i32(0);
            Expr[] in = new Expr[x.rank()];
            long stride = 1;
            for (int d = x.rank() - 1; d >= 0; d--) {
                Expr q = stride == 1 ? linear : linear.floordiv(stride);
                in[d] = d == 0 ? q : q.floormod(x.dim(d));
                stride *= x.dim(d);
            }
            return x.at(in);
        });
    }

    private static Expr index(IterVar v, boolean wide) {
        return wide ? v.cast(DType.INT64) : v;
    }
}
