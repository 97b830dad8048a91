package dev.kiln.onnx;

import dev.kiln.ir.DType;
import dev.kiln.ir.KilnException;
import dev.kiln.onnx.proto.Onnx.NodeProto;
import java.util.Arrays;

/**
 * Blocked quantisation (opset 21, {@code block_size} > 0): along {@code axis}, every {@code block_size}
 * consecutive elements share one scale and zero point, so the scale has x's shape with that axis cut to
 * {@code ceil(extent / block_size)}. Weight-only quantised models store their weights this way; Kiln folds
 * such a QuantizeLinear or DequantizeLinear of a constant at import, with the arithmetic of the
 * per-tensor fold ({@link QuantOps#foldQuantize}, {@link QuantOps#foldDequantize}).
 */
final class Blocked {
    private Blocked() {}

    /** The scale input, a float tensor of any rank (checked against x by {@link #axis}). */
    static Const scale(ImportContext ctx, NodeProto n, Ref x, int i, String what) {
        Const c = ctx.constant(n, i, what);
        if (!c.isFloat()) throw new KilnException("input " + i + " (" + what + ") must be a float tensor");
        return c;
    }

    /** Which axis is blocked, and in blocks of how many elements. */
    record Layout(int axis, long block) {}

    static Layout axis(Ref x, Const scale, Const zp, Attrs a) {
        long block = a.getInt("block_size", 0);
        if (block < 0) throw new KilnException("attribute 'block_size' must be positive, got " + block);
        int axis = NnOps.axis(a.getInt("axis", 1), x.rank());
        long[] want = x.shape().clone();
        want[axis] = Math.ceilDiv(want[axis], block);
        if (!Arrays.equals(scale.shape(), want)) {
            throw new KilnException("a blocked scale for x " + Arrays.toString(x.shape()) + " with block_size " + block
                    + " along axis " + axis + " must have shape " + Arrays.toString(want) + ", got "
                    + Arrays.toString(scale.shape()));
        }
        if (!Arrays.equals(scale.shape(), zp.shape())) {
            throw new KilnException("scale " + Arrays.toString(scale.shape()) + " and zero point "
                    + Arrays.toString(zp.shape()) + " differ in shape");
        }
        return new Layout(axis, block);
    }

    static Const quantize(Const x, Const scale, Const zp, Layout l) {
        long[] shape = x.shape();
        long[] out = new long[x.size()];
        DType t = zp.dtype();
        for (int i = 0; i < out.length; i++) {
            int b = blockIndex(i, shape, scale.shape(), l);
            float q = (float) Math.rint((float) x.get(i) / (float) scale.get(b)) + (float) zp.getLong(b);
            out[i] = (long) Math.clamp(q, (float) t.minInt(), (float) t.maxInt());
        }
        return Const.ofInts(t, out, shape);
    }

    static Const dequantize(Const x, Const scale, Const zp, Layout l) {
        long[] shape = x.shape();
        float[] out = new float[x.size()];
        for (int i = 0; i < out.length; i++) {
            int b = blockIndex(i, shape, scale.shape(), l);
            out[i] = (float) (int) (x.getLong(i) - zp.getLong(b)) * (float) scale.get(b);
        }
        return Const.ofFloats(out, shape);
    }

    /** The flat position in the scale of element {@code flat} of x. */
    private static int blockIndex(int flat, long[] shape, long[] sshape, Layout l) {
        long rest = flat, pos = 0, stride = 1;
        for (int d = shape.length - 1; d >= 0; d--) {
            long idx = rest % shape[d];
            rest /= shape[d];
            if (d == l.axis()) idx /= l.block();
            pos += idx * stride;
            stride *= sshape[d];
        }
        return (int) pos;
    }
}
