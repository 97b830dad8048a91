package dev.kiln.nn;

import static dev.kiln.te.Te.sum;

import dev.kiln.ir.DType;
import dev.kiln.ir.Expr;
import dev.kiln.ir.IterVar;
import dev.kiln.ir.KilnException;
import dev.kiln.te.Shape;
import dev.kiln.te.Te;
import dev.kiln.te.Tensor;
import java.util.List;

/**
 * A one-group NHWC conv2d as a matrix multiply (implicit GEMM, as cuDNN and CUTLASS run convolutions on Tensor
 * Cores): the output pixels are the rows, {@code p = (n * OH + oh) * OW + ow}, the taps the reduction, {@code q =
 * (kh * KW + kw) * C + c}, and
 *
 * <pre>
 * im2col[p, q]      = data[n, oh * sh - pt + kh * dh, ow * sw - pl + kw * dw, c]   (0 in the padding, past M or K)
 * conv2d_gemm[p, o] = sum_q acc(im2col[p, q]) * acc(weight[q, o])
 * </pre>
 *
 * where {@code weight} is the HWIO weight seen as {@code [KH * KW * C, CO]} (a reshape: the same memory) and
 * {@code acc} a cast to the accumulation type (float32 for float16 and bfloat16 operands). {@code im2col} is a stage
 * of its own that a schedule inlines where it reads it: the Tensor Core sketch copies its tiles straight from
 * {@code data} into shared memory, so the [M, K] matrix is never written. Rows and reduction may be padded (to the
 * Tensor Cores' multiples of 16): the extra rows and columns of {@code im2col} read as 0, so extra output rows are
 * 0 and extra weight rows add nothing. The NHWC output is {@code conv2d_gemm}'s first M rows, reshaped.
 */
public final class ConvGemm {
    private ConvGemm() {}

    /**
     * The im2col matrix of {@code data} {@code [N, H, W, C]} for a {@code kh} x {@code kw} window with {@code p}'s
     * strides, padding and dilations (one group): {@code [rows, cols]}, rows at least {@code N * OH * OW}, cols at
     * least {@code kh * kw * C}, zero outside the image and past those counts. Named "im2col".
     */
    @Operator("im2col of NHWC data for a conv2d window: [N*OH*OW (or more), KH*KW*C (or more)], zero in the padding.")
    public static Tensor im2colNhwc(Tensor data, long kh, long kw, ConvParams p, long rows, long cols) {
        String op = "im2col";
        Axes.requireRank(op, data, 4);
        ConvChecks.checkWindow(op, p, new String[] {"H", "W"});
        if (p.groups() != 1) throw new KilnException(op + ": groups must be 1, got " + p.groups());
        if (kh < 1 || kw < 1) throw new KilnException(op + ": window " + kh + " x " + kw + " must be at least 1 x 1");
        long n = data.dim(0), h = data.dim(1), w = data.dim(2), c = data.dim(3);
        long oh = ConvOutput.size(op, "H", h, kh, p.stride(0), p.padBefore(0), p.padAfter(0), p.dilation(0));
        long ow = ConvOutput.size(op, "W", w, kw, p.stride(1), p.padBefore(1), p.padAfter(1), p.dilation(1));
        long m = n * oh * ow, k = kh * kw * c;
        if (rows < m) {
            throw new KilnException(op + ": rows " + rows + " below the " + m + " output pixels of tensor '"
                    + data.name() + "' (N * OH * OW = " + n + " * " + oh + " * " + ow + ")");
        }
        if (cols < k) {
            throw new KilnException(op + ": cols " + cols + " below the " + k + " taps of tensor '" + data.name()
                    + "' (KH * KW * C = " + kh + " * " + kw + " * " + c + ")");
        }
        return Te.computeN(op, op, Shape.of(rows, cols), idx -> {
            Expr pix = idx.get(0), tap = idx.get(1);
            Expr b = pix.floordiv(oh * ow), y = pix.floordiv(ow).floormod(oh), x = pix.floormod(ow);
            Expr r = tap.floordiv(kw * c), s = tap.floordiv(c).floormod(kw), ch = tap.floormod(c);
            Expr hi = ConvChecks.window(y, p.stride(0), r, p.dilation(0)).sub(p.padBefore(0));
            Expr wi = ConvChecks.window(x, p.stride(1), s, p.dilation(1)).sub(p.padBefore(1));
            Expr inside = null;
            if (rows > m) inside = pix.lt(m);
            if (cols > k) inside = and(inside, tap.lt(k));
            if (p.padBefore(0) > 0) inside = and(inside, hi.ge(0));
            if (p.padAfter(0) > 0 || needsUpperCheck(oh, p.stride(0), kh, p.dilation(0), p.padBefore(0), h))
                inside = and(inside, hi.lt(h));
            if (p.padBefore(1) > 0) inside = and(inside, wi.ge(0));
            if (p.padAfter(1) > 0 || needsUpperCheck(ow, p.stride(1), kw, p.dilation(1), p.padBefore(1), w))
                inside = and(inside, wi.lt(w));
            Expr read = data.at(List.of(b, hi, wi, ch));
            return inside == null ? read : Te.select(inside, read, Te.constant(data.dtype(), 0));
        });
    }

    /** Whether the window can reach past the image's last row (only with padding after it). */
    private static boolean needsUpperCheck(long out, long stride, long k, long dilation, long padBefore, long size) {
        return (out - 1) * stride + (k - 1) * dilation - padBefore > size - 1;
    }

    private static Expr and(Expr a, Expr b) {
        return a == null ? b : a.and(b);
    }

    /**
     * The conv as a GEMM: {@code conv2d_gemm[p, o] = sum_q acc(im2col[p, q]) * acc(weight[q, o])} of {@link
     * #im2colNhwc}'s matrix ({@code rows} rows, as many columns as {@code weight} has rows) and {@code weight}
     * {@code [cols, CO]} (the HWIO weight reshaped, zero rows past {@code kh * kw * C} if padded); float16 and
     * bfloat16 operands accumulate in float32, float32 in float32. Output {@code [rows, CO]}, named "conv2d_gemm".
     */
    @Operator("conv2d NHWC as a GEMM over im2col rows: [rows, CO], float32 sums of float16/bfloat16 operands.")
    public static Tensor conv2dNhwcGemm(Tensor data, Tensor weight, long kh, long kw, ConvParams p, long rows) {
        String op = "conv2d_gemm";
        ConvChecks.requireSameDType(op, data, weight);
        Axes.requireRank(op, weight, 2);
        DType t = data.dtype();
        if (t != DType.FLOAT16 && t != DType.BFLOAT16 && t != DType.FLOAT32) {
            throw new KilnException(
                    op + ": tensor '" + data.name() + "' is " + t + "; float16, bfloat16 or float32 operands only");
        }
        long cols = weight.dim(0), co = weight.dim(1);
        Tensor a = im2colNhwc(data, kh, kw, p, rows, cols);
        return Te.computeN(op, op, Shape.of(rows, co), idx -> {
            IterVar q = Te.reduceAxis(cols, "rq");
            Expr x = a.at(idx.get(0), q), y = weight.at(q, idx.get(1));
            if (t != DType.FLOAT32) {
                x = x.cast(DType.FLOAT32);
                y = y.cast(DType.FLOAT32);
            }
            return sum(q, x.mul(y));
        });
    }

    /** The output pixels {@code N * OH * OW} of {@code data} under this window: the GEMM's rows before padding. */
    public static long pixels(Tensor data, long kh, long kw, ConvParams p) {
        long oh = ConvOutput.size(
                "conv2d_gemm", "H", data.dim(1), kh, p.stride(0), p.padBefore(0), p.padAfter(0), p.dilation(0));
        long ow = ConvOutput.size(
                "conv2d_gemm", "W", data.dim(2), kw, p.stride(1), p.padBefore(1), p.padAfter(1), p.dilation(1));
        return data.dim(0) * oh * ow;
    }
}
