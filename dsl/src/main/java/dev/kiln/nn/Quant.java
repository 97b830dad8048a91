package dev.kiln.nn;

import dev.kiln.ir.DType;
import dev.kiln.ir.Expr;
import dev.kiln.ir.IterVar;
import dev.kiln.ir.KilnException;
import dev.kiln.ir.Literals;
import dev.kiln.te.Shape;
import dev.kiln.te.Te;
import dev.kiln.te.Tensor;
import java.util.List;

/**
 * Integer quantisation (the ONNX QuantizeLinear / DequantizeLinear / MatMulInteger family) and
 * type casts. Scales and zero points broadcast against the data (numpy rules: a per-tensor scale is
 * shape [1], a per-channel one is laid along its axis with unit extents elsewhere).
 *
 * <p>Rounding follows ONNX exactly: {@link #quantize} rounds half to even and saturates to the
 * target range; {@link #denseInteger} accumulates in int32; {@link #requantize} scales an int32
 * accumulator in float32, rounds half to even, adds the zero point and saturates.
 */
public final class Quant {
    private Quant() {}

    /** The tag of the elementwise stages built here. */
    public static final String TAG = Elementwise.TAG;

    /** {@code cast(to, x)} elementwise (float to integer truncates toward zero and saturates; integers wrap). */
    @Operator("Elementwise conversion to `to` (float to integer truncates and saturates; integers wrap).")
    public static Tensor cast(Tensor x, DType to) {
        Axes.requireNonNull("cast", "input", x);
        return Te.computeN("cast", TAG, x.shape(), idx -> x.at(idx).cast(to));
    }

    /**
     * {@code saturate(round_half_even(x / scale) + zeroPoint)} in the zero point's type (int8, uint8,
     * int16 or int32); {@code x} and {@code scale} float32.
     */
    @Operator("`saturate(round_half_even(x / scale) + zeroPoint)` in the zero point's type.")
    public static Tensor quantize(Tensor x, Tensor scale, Tensor zeroPoint) {
        String op = "quantize";
        Axes.requireFloat(op, x);
        Axes.requireSameDType(op, x, scale);
        DType to = zeroPoint.dtype();
        if (!to.isInt())
            throw new KilnException(
                    op + ": zero point tensor " + Axes.describe(zeroPoint) + " must be an integer type, got " + to);
        Shape s = broadcast(op, x, scale, zeroPoint);
        return Te.computeN(op, TAG, s, idx -> {
            // divided exactly (never by a fast-math target's reciprocal), as ONNX specifies: one bit off can round
            // to the next integer
            Expr q = Te.round(Te.exactDiv(x.at(idx), Elementwise.broadcastRead(scale, idx)))
                    .add(Elementwise.broadcastRead(zeroPoint, idx).cast(x.dtype()));
            return clampTo(q, to).cast(to);
        });
    }

    /**
     * ONNX DynamicQuantizeLinear's parameters of float32 {@code x}, as float32 {@code [scale, zeroPoint]}: with
     * {@code lo = min(0, min(x))} and {@code hi = max(0, max(x))} (the range widened to hold 0), {@code scale = (hi -
     * lo) / 255} (1 when the range is empty) and {@code zeroPoint = round_half_even(clamp(-lo / scale, 0, 255))}, in
     * float32 step by step as ONNX Runtime computes them (the divides exact on every target: a zero point near a
     * half, as symmetric data gives, would otherwise round either way). {@link #quantize} with them (the zero point
     * cast to uint8) gives the operator's uint8 output.
     */
    @Operator("DynamicQuantizeLinear's `[scale, zero point]` for uint8 from float32 x's range widened to hold 0.")
    public static Tensor dynamicQuantParams(Tensor x) {
        String op = "dynamic_qparams";
        if (x.dtype() != DType.FLOAT32)
            throw new KilnException(op + ": tensor " + Axes.describe(x) + " must be float32, got " + x.dtype());
        Tensor hi = Reduction.max(x, true), lo = Reduction.min(x, true);
        long[] at = new long[x.rank()];
        return Te.computeN(op, TAG, Shape.of(2), idx -> {
            Expr h = hi.at(at).max(0.0), l = lo.at(at).min(0.0);
            Expr range = Te.exactDiv(h.sub(l), Literals.of(DType.FLOAT32, 255.0));
            Expr scale = Te.select(h.eq(l), Literals.of(DType.FLOAT32, 1.0), range);
            Expr zero = Te.round(Te.exactDiv(l.neg(), scale).max(0.0).min(255.0));
            return Te.select(idx.get(0).eq(0L), scale, zero);
        });
    }

    /** {@code float32(int32(x) - int32(zeroPoint)) * scale}: integer data back to float32. */
    @Operator("`float32(x - zeroPoint) * scale`: integer data back to float32.")
    public static Tensor dequantize(Tensor x, Tensor scale, Tensor zeroPoint) {
        String op = "dequantize";
        if (!x.dtype().isInt())
            throw new KilnException(op + ": tensor " + Axes.describe(x) + " must be an integer type, got " + x.dtype());
        Axes.requireSameDType(op, x, zeroPoint);
        Axes.requireFloat(op, scale);
        Shape s = broadcast(op, x, scale, zeroPoint);
        return Te.computeN(op, TAG, s, idx -> x.at(idx)
                .cast(DType.INT32)
                .sub(Elementwise.broadcastRead(zeroPoint, idx).cast(DType.INT32))
                .cast(scale.dtype())
                .mul(Elementwise.broadcastRead(scale, idx)));
    }

    /**
     * {@code saturate(round_half_even(float32(acc) * multiplier) + zeroPoint)} in the zero point's type:
     * an int32 accumulator scaled back to 8 bits (the epilogue of QLinearMatMul).
     */
    @Operator("`saturate(round_half_even(acc * multiplier) + zeroPoint)`: an int32 accumulator back to 8 bits.")
    public static Tensor requantize(Tensor acc, Tensor multiplier, Tensor zeroPoint) {
        String op = "requantize";
        Axes.requireDType(op, acc, DType.INT32);
        Axes.requireFloat(op, multiplier);
        DType to = zeroPoint.dtype();
        if (!to.isInt())
            throw new KilnException(
                    op + ": zero point tensor " + Axes.describe(zeroPoint) + " must be an integer type, got " + to);
        Shape s = broadcast(op, acc, multiplier, zeroPoint);
        return Te.computeN(op, TAG, s, idx -> {
            Expr q = Te.round(acc.at(idx).cast(multiplier.dtype()).mul(Elementwise.broadcastRead(multiplier, idx)))
                    .add(Elementwise.broadcastRead(zeroPoint, idx).cast(multiplier.dtype()));
            return clampTo(q, to).cast(to);
        });
    }

    /**
     * {@code out[n, u] = sum_k (int32(x[n, k]) - xZero) * (int32(w[u, k]) - wZero)} in int32, for
     * 8-bit {@code x [N, K]} and {@code w [units, K]}; {@code xZero} is [1] or [N] (per row),
     * {@code wZero} [1] or [units] (per output column).
     */
    @Operator("`out[n, u] = sum_k (x[n, k] - xZero) * (w[u, k] - wZero)` in int32 for 8-bit x and w.")
    public static Tensor denseInteger(Tensor x, Tensor w, Tensor xZero, Tensor wZero) {
        String op = "dense_integer";
        Axes.requireRank(op, x, 2);
        Axes.requireRank(op, w, 2);
        for (Tensor t : List.of(x, w)) {
            if (!t.dtype().isInt() || t.dtype().bits() > 16) {
                throw new KilnException(
                        op + ": tensor " + Axes.describe(t) + " must be int8, uint8 or int16, got " + t.dtype());
            }
        }
        Axes.requireSameDType(op, x, xZero);
        Axes.requireSameDType(op, w, wZero);
        if (x.dim(1) != w.dim(1)) {
            throw new KilnException(op + ": axis 1 of tensor " + Axes.describe(x) + " has extent " + x.dim(1)
                    + " but axis 1 of weight tensor " + Axes.describe(w) + " has extent " + w.dim(1));
        }
        requirePer(op, xZero, x.dim(0), "rows of " + Axes.describe(x));
        requirePer(op, wZero, w.dim(0), "units of " + Axes.describe(w));
        long k = x.dim(1);
        return Te.computeN(op, "dense", Shape.of(x.dim(0), w.dim(0)), idx -> {
            IterVar r = Te.reduceAxis(k, "k");
            IterVar n = idx.get(0), u = idx.get(1);
            Expr xz = xZero.at(xZero.dim(0) == 1 ? Literals.like(n, 0L) : n).cast(DType.INT32);
            Expr wz = wZero.at(wZero.dim(0) == 1 ? Literals.like(u, 0L) : u).cast(DType.INT32);
            return Te.sum(
                    r,
                    x.at(n, r)
                            .cast(DType.INT32)
                            .sub(xz)
                            .mul(w.at(u, r).cast(DType.INT32).sub(wz)));
        });
    }

    private static Expr clampTo(Expr v, DType to) {
        return v.max(Literals.like(v, (double) to.minInt())).min(Literals.like(v, (double) to.maxInt()));
    }

    private static void requirePer(String op, Tensor z, long n, String what) {
        if (z.rank() != 1 || (z.dim(0) != 1 && z.dim(0) != n)) {
            throw new KilnException(op + ": zero point tensor " + Axes.describe(z) + " must have shape [1] or [" + n
                    + "] (" + what + ")");
        }
    }

    private static Shape broadcast(String op, Tensor x, Tensor scale, Tensor zeroPoint) {
        Shape s = Elementwise.broadcastShape(op, x, scale);
        if (!s.equals(x.shape())
                || !Elementwise.broadcastShape(op, x, zeroPoint).equals(x.shape())) {
            throw new KilnException(op + ": scale " + Axes.describe(scale) + " and zero point "
                    + Axes.describe(zeroPoint) + " must broadcast to the shape of tensor " + Axes.describe(x));
        }
        return s;
    }
}
