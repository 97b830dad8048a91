package dev.kiln.nn;

import dev.kiln.ir.KilnException;

/**
 * Output extents of sliding-window operators (convolution, pooling, transposed convolution), with
 * a clear error when the window does not fit.
 */
final class ConvOutput {
    private ConvOutput() {}

    /**
     * Output extent of a convolution or pooling window along one axis:
     * {@code floor((in + padBefore + padAfter - dilation * (kernel - 1) - 1) / stride) + 1}.
     *
     * @param op   the operator, for the message ("conv2d_nhwc")
     * @param axis the axis, for the message ("H")
     * @throws KilnException when the padded input is shorter than the dilated kernel (output <= 0)
     */
    public static long size(
            String op, String axis, long in, long kernel, long stride, long padBefore, long padAfter, long dilation) {
        long extent = dilation * (kernel - 1) + 1;
        long padded = in + padBefore + padAfter;
        long out = Math.floorDiv(padded - extent, stride) + 1;
        if (out <= 0) {
            throw new KilnException(op + ": output size along " + axis + " would be " + out + ": the padded input "
                    + in + " + " + padBefore + " + " + padAfter + " = " + padded
                    + " is smaller than the dilated kernel extent " + extent + " (kernel " + kernel + ", dilation "
                    + dilation + ")");
        }
        return out;
    }

    /**
     * Output extent of a transposed convolution along one axis, as PyTorch's ConvTranspose:
     * {@code (in - 1) * stride - padBefore - padAfter + dilation * (kernel - 1) + outputPadding + 1}.
     *
     * @throws KilnException when the padding crops the whole output (output <= 0)
     */
    public static long transposedSize(
            String op,
            String axis,
            long in,
            long kernel,
            long stride,
            long padBefore,
            long padAfter,
            long dilation,
            long outputPadding) {
        long full = (in - 1) * stride + dilation * (kernel - 1) + outputPadding + 1;
        long out = full - padBefore - padAfter;
        if (out <= 0) {
            throw new KilnException(op + ": output size along " + axis + " would be " + out + ": padding " + padBefore
                    + " + " + padAfter + " crops the whole uncropped output of " + full);
        }
        return out;
    }
}
