package dev.kiln.nn;

import dev.kiln.ir.DType;
import dev.kiln.ir.Expr;
import dev.kiln.ir.KilnException;
import dev.kiln.ir.Literals;
import dev.kiln.te.Shape;
import dev.kiln.te.Te;
import dev.kiln.te.Tensor;

/**
 * Data-dependent selection and broadcasting: {@link #take} (gather with run-time indices),
 * {@link #where} (elementwise choice by a bool condition) and {@link #broadcastTo} (numpy's
 * broadcast_to, ONNX Expand). Each is one injective stage tagged {@link Layout#TAG}.
 */
public final class Indexing {
    private Indexing() {}

    /**
     * {@code out[i..., j..., k...] = data[i..., index(indices[j...]), k...]} along {@code axis}
     * (ONNX Gather, numpy take) with indices computed at run time: negative indices count from the
     * end; an index outside {@code [-extent, extent)} is clamped into range, so a bad index never
     * reads outside the tensor.
     */
    @Operator("Gather along `axis` with indices computed at run time (ONNX Gather); indices clamped into range.")
    public static Tensor take(Tensor data, Tensor indices, int axis) {
        String op = "take";
        int ax = Axes.normalize(op, data, axis);
        if (!indices.dtype().isInt())
            throw new KilnException(op + ": indices tensor " + Axes.describe(indices) + " must be an integer type, got "
                    + indices.dtype());
        long extent = data.dim(ax);
        long[] dims = new long[data.rank() - 1 + indices.rank()];
        int j = 0;
        for (int d = 0; d < ax; d++) dims[j++] = data.dim(d);
        for (int d = 0; d < indices.rank(); d++) dims[j++] = indices.dim(d);
        for (int d = ax + 1; d < data.rank(); d++) dims[j++] = data.dim(d);
        if (dims.length == 0)
            throw new KilnException(op + ": a scalar result is not supported (give indices of rank 1 or more)");
        int ir = indices.rank();
        return Te.computeN(op, Layout.TAG, Shape.of(dims), idx -> {
            Expr i = indices.at(idx.subList(ax, ax + ir)).cast(DType.INT64);
            i = Te.select(i.lt(Literals.like(i, 0L)), i.add(Literals.like(i, extent)), i);
            i = i.max(Literals.like(i, 0L)).min(Literals.like(i, extent - 1));
            Expr[] at = new Expr[data.rank()];
            for (int d = 0; d < ax; d++) at[d] = idx.get(d);
            at[ax] = i.cast(idx.get(0).dtype());
            for (int d = ax + 1; d < data.rank(); d++) at[d] = idx.get(d - 1 + ir);
            return data.at(at);
        });
    }

    /** {@code cond ? x : y} elementwise, the three broadcast together (numpy rules); {@code cond} is bool. */
    @Operator("`cond ? x : y` elementwise, the three broadcast together (numpy rules); `cond` is bool.")
    public static Tensor where(Tensor cond, Tensor x, Tensor y) {
        String op = "where";
        Axes.requireDType(op, cond, DType.BOOL);
        Axes.requireSameDType(op, x, y);
        Shape s = Elementwise.broadcastShape(op, x, y);
        Tensor shaped = Te.placeholder("shape", DType.BOOL, s);
        s = Elementwise.broadcastShape(op, cond, shaped);
        return Te.computeN(
                op,
                Layout.TAG,
                s,
                idx -> Te.select(
                        Elementwise.broadcastRead(cond, idx),
                        Elementwise.broadcastRead(x, idx),
                        Elementwise.broadcastRead(y, idx)));
    }

    /** {@code x} broadcast to {@code shape} together (numpy rules: the result is the broadcast of both shapes). */
    @Operator("`x` broadcast to `shape` (numpy rules; ONNX Expand).")
    public static Tensor broadcastTo(Tensor x, long... shape) {
        String op = "broadcast_to";
        Shape s = Elementwise.broadcastShape(op, x, Te.placeholder("shape", x.dtype(), shape));
        return Te.computeN(op, Layout.TAG, s, idx -> Elementwise.broadcastRead(x, idx));
    }
}
