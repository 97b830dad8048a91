package dev.kiln.nn;

import static dev.kiln.te.Te.select;

import dev.kiln.ir.Expr;
import dev.kiln.ir.IterVar;
import dev.kiln.ir.KilnException;
import dev.kiln.ir.Literals;
import dev.kiln.te.Shape;
import dev.kiln.te.Te;
import dev.kiln.te.Tensor;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Constant padding of a tensor of any rank, as its own compute stage:
 * {@code pad[i] = inBounds(i) ? x[i - before] : value}. The convolution and pooling operators
 * make this stage only when some padding is non-zero (the auto-scheduler inlines it later, as
 * TVM/Ansor do).
 */
public final class Pad {
    private Pad() {}

    /** Pads {@code x} with {@code before[d]} and {@code after[d]} elements of zero on each axis {@code d}. */
    @Operator("Pads each axis d with `before[d]` and `after[d]` elements of a constant (zero by default).")
    public static Tensor pad(Tensor x, long[] before, long[] after) {
        return pad(x, before, after, Literals.of(x.dtype(), 0L));
    }

    /**
     * Pads {@code x} with {@code before[d]} and {@code after[d]} elements of {@code value} on each
     * axis {@code d}; the value is converted to the dtype of {@code x} (a fractional value needs a
     * floating type). The result is named "pad".
     */
    public static Tensor pad(Tensor x, long[] before, long[] after, double value) {
        return pad(x, before, after, Literals.of(x.dtype(), value));
    }

    /** As {@link #pad(Tensor, long[], long[], double)} with a constant expression of the dtype of {@code x}. */
    public static Tensor pad(Tensor x, long[] before, long[] after, Expr value) {
        check(x, before, after, value);
        long[] out = new long[x.rank()];
        for (int d = 0; d < out.length; d++) out[d] = x.dim(d) + before[d] + after[d];
        return Te.computeN("pad", "pad", Shape.of(out), idx -> body(x, before, after, value, idx));
    }

    /** The padded tensor, or {@code x} itself when all padding is zero. */
    static Tensor padIfNeeded(Tensor x, long[] before, long[] after, Expr value) {
        boolean any = false;
        for (int d = 0; d < x.rank(); d++) any |= before[d] != 0 || after[d] != 0;
        return any ? pad(x, before, after, value) : x;
    }

    private static Expr body(Tensor x, long[] before, long[] after, Expr value, List<IterVar> idx) {
        List<Expr> src = new ArrayList<>();
        Expr inBounds = null;
        for (int d = 0; d < x.rank(); d++) {
            Expr i = idx.get(d);
            if (before[d] > 0) inBounds = and(inBounds, i.ge(before[d]));
            if (after[d] > 0) inBounds = and(inBounds, i.lt(before[d] + x.dim(d)));
            src.add(before[d] > 0 ? i.sub(before[d]) : i);
        }
        Expr read = x.at(src);
        return inBounds == null ? read : select(inBounds, read, value);
    }

    private static Expr and(Expr a, Expr b) {
        return a == null ? b : a.and(b);
    }

    private static void check(Tensor x, long[] before, long[] after, Expr value) {
        if (before.length != x.rank() || after.length != x.rank()) {
            throw new KilnException("pad: tensor '" + x.name() + "' has rank " + x.rank() + " but the padding has "
                    + before.length + " value(s) before and " + after.length + " after: " + Arrays.toString(before)
                    + ", " + Arrays.toString(after));
        }
        for (int d = 0; d < x.rank(); d++) {
            if (before[d] < 0 || after[d] < 0) {
                throw new KilnException("pad: padding of tensor '" + x.name() + "' axis " + d
                        + " must be non-negative, got " + before[d] + " before and " + after[d] + " after");
            }
        }
        if (value.dtype() != x.dtype()) {
            throw new KilnException(
                    "pad: the pad value is " + value.dtype() + " but tensor '" + x.name() + "' is " + x.dtype());
        }
    }
}
