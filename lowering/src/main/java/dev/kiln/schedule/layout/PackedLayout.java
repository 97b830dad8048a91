package dev.kiln.schedule.layout;

import dev.kiln.ir.Expr;
import dev.kiln.ir.KilnException;
import dev.kiln.runtime.NDArray;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The new layout of a rewritten weight: dimension {@code j} of the packed array holds one "digit"
 * of an axis of the original array, {@code packed[..., (x[axis] / stride) % extent, ...]}, so
 * {@code original[x] = packed[digits of x]}. The digits of every original axis form an exact
 * mixed radix (their strides are 1, e1, e1*e2, ... and the extents multiply to the axis' extent),
 * so the map is a bijection whatever order the dimensions come in; the order is the loop order of
 * the stage that reads the weight. Axes of extent 1 have no dimension.
 *
 * @param originalShape the shape of the original placeholder
 * @param dims          the packed dimensions, outermost first
 * @param axisNames     a name per original axis (the reading stage's loop variable), for printing
 */
public record PackedLayout(long[] originalShape, List<Dim> dims, List<String> axisNames) {

    /** One packed dimension: digit {@code (x[axis] / stride) % extent} of original axis {@code axis}. */
    public record Dim(int axis, long stride, long extent) {
        public Dim {
            if (stride < 1 || extent < 1) throw new KilnException("a packed dimension needs stride and extent >= 1");
        }
    }

    public PackedLayout {
        originalShape = originalShape.clone();
        dims = List.copyOf(dims);
        axisNames = List.copyOf(axisNames);
        if (axisNames.size() != originalShape.length) {
            throw new KilnException(
                    "layout: " + axisNames.size() + " axis names for a rank-" + originalShape.length + " tensor");
        }
        for (int a = 0; a < originalShape.length; a++) {
            List<Dim> mine = new ArrayList<>();
            for (Dim d : dims) {
                if (d.axis() < 0 || d.axis() >= originalShape.length) {
                    throw new KilnException("layout: dimension over axis " + d.axis() + " of a rank-"
                            + originalShape.length + " tensor");
                }
                if (d.axis() == a) mine.add(d);
            }
            mine.sort((x, y) -> Long.compare(x.stride(), y.stride()));
            long expect = 1;
            for (Dim d : mine) {
                if (d.stride() != expect) {
                    throw new KilnException("layout: the digits of axis " + axisNames.get(a)
                            + " are not an exact mixed radix: " + mine);
                }
                expect *= d.extent();
            }
            if (expect != originalShape[a]) {
                throw new KilnException("layout: the digits of axis " + axisNames.get(a) + " cover " + expect
                        + " values, not its extent " + originalShape[a]);
            }
        }
    }

    /** The shape of the original placeholder (a copy). */
    @Override
    public long[] originalShape() {
        return originalShape.clone();
    }

    /** The packed shape (a single 1 when every axis has extent 1). */
    public long[] newShape() {
        if (dims.isEmpty()) return new long[] {1};
        return dims.stream().mapToLong(Dim::extent).toArray();
    }

    /** Whether the packed array is the original one (same dimensions in the same order). */
    public boolean isIdentity() {
        if (dims.size() != originalShape.length) return false;
        for (int j = 0; j < dims.size(); j++) if (dims.get(j).axis() != j) return false;
        return true;
    }

    /**
     * The packed indices for a read {@code original[axisIndex...]}: {@code floormod(floordiv(x,
     * stride), extent)}, leaving out a division by 1 and the remainder of the top digit.
     */
    public List<Expr> indices(List<? extends Expr> axisIndex) {
        if (axisIndex.size() != originalShape.length) {
            throw new KilnException(
                    "layout: " + axisIndex.size() + " indices for a rank-" + originalShape.length + " tensor");
        }
        List<Expr> out = new ArrayList<>();
        for (Dim d : dims) {
            Expr x = axisIndex.get(d.axis());
            Expr v = d.stride() == 1 ? x : x.floordiv(d.stride());
            if (d.stride() * d.extent() != originalShape[d.axis()]) v = v.floormod(d.extent());
            out.add(v);
        }
        if (out.isEmpty()) out.add(dev.kiln.ir.Literals.of(dev.kiln.ir.DType.INT32, 0L));
        return out;
    }

    /**
     * The packed copy of {@code original} (any strides, shape {@link #originalShape}): plain loops
     * over the packed shape, exact for every dtype (elements are copied as bytes).
     */
    public NDArray apply(NDArray original) {
        if (!Arrays.equals(original.shape(), originalShape)) {
            throw new KilnException(
                    "layout transform of " + original + ": expected shape " + Arrays.toString(originalShape));
        }
        long[] shape = newShape();
        NDArray out = NDArray.allocate(original.dtype(), shape);
        long[] srcStrides = original.strides();
        int n = shape.length;
        long[] step = new long[n];
        for (int j = 0; j < dims.size(); j++)
            step[j] = dims.get(j).stride() * srcStrides[dims.get(j).axis()];
        int bytes = original.dtype().bytes();
        MemorySegment src = original.segment(), dst = out.segment();
        long[] idx = new long[n];
        long srcOff = 0;
        for (long flat = 0, total = out.numElements(); flat < total; flat++) {
            copyElement(src, srcOff * bytes, dst, flat * bytes, bytes);
            for (int j = n - 1; j >= 0; j--) {
                idx[j]++;
                srcOff += step[j];
                if (idx[j] < shape[j]) break;
                srcOff -= step[j] * idx[j];
                idx[j] = 0;
            }
        }
        return out;
    }

    private static void copyElement(MemorySegment src, long from, MemorySegment dst, long to, int bytes) {
        switch (bytes) {
            case 4 -> dst.set(ValueLayout.JAVA_INT_UNALIGNED, to, src.get(ValueLayout.JAVA_INT_UNALIGNED, from));
            case 8 -> dst.set(ValueLayout.JAVA_LONG_UNALIGNED, to, src.get(ValueLayout.JAVA_LONG_UNALIGNED, from));
            case 2 -> dst.set(ValueLayout.JAVA_SHORT_UNALIGNED, to, src.get(ValueLayout.JAVA_SHORT_UNALIGNED, from));
            default -> MemorySegment.copy(src, from, dst, to, bytes);
        }
    }

    /** E.g. {@code [co/16:4, rh:3, rw:3, rc:64, co%16:16]}. */
    @Override
    public String toString() {
        List<String> parts = new ArrayList<>();
        for (Dim d : dims) {
            String name = axisNames.get(d.axis());
            boolean top = d.stride() * d.extent() == originalShape[d.axis()];
            String digit = d.stride() == 1
                    ? (top ? name : name + "%" + d.extent())
                    : top ? name + "/" + d.stride() : "(" + name + "/" + d.stride() + ")%" + d.extent();
            parts.add(digit + ":" + d.extent());
        }
        return parts.toString();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof PackedLayout p && Arrays.equals(originalShape, p.originalShape) && dims.equals(p.dims);
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(originalShape) * 31 + dims.hashCode();
    }
}
