package dev.kiln.onnx;

import static dev.kiln.onnx.ImportContext.NHWC;

import dev.kiln.graph.Op;
import dev.kiln.ir.KilnException;
import dev.kiln.onnx.proto.Onnx.NodeProto;
import java.util.Arrays;
import java.util.Set;

/**
 * MaxPool, AveragePool, GlobalAveragePool and GlobalMaxPool over 1, 2 or 3 spatial axes. Images (rank 4)
 * are pooled NHWC like the convolutions around them; 1-D and 3-D data in ONNX's own layout (NCL, NCDHW).
 */
final class PoolOps {
    private PoolOps() {}

    private static final String[] LAYOUT = {null, "NCL", "NHWC", "NCDHW"};

    static void pool(ImportContext ctx, NodeProto n) {
        boolean max = n.getOpType().equals("MaxPool");
        Attrs a = new Attrs(
                n,
                max
                        ? Set.of(
                                "auto_pad",
                                "ceil_mode",
                                "dilations",
                                "kernel_shape",
                                "pads",
                                "storage_order",
                                "strides")
                        : Set.of(
                                "auto_pad",
                                "ceil_mode",
                                "count_include_pad",
                                "dilations",
                                "kernel_shape",
                                "pads",
                                "strides"));
        OnnxOps.outputsAtMost(n, 1, "MaxPool's indices");
        Ref x = ctx.required(n, 0);
        int s = spatialRank(x);
        long[] k = a.getInts("kernel_shape");
        if (k == null || k.length != s)
            throw new KilnException("kernel_shape must list " + s + " extents, got " + Arrays.toString(k));
        long[] strides = ConvOps.ints(a, "strides", s), dil = ConvOps.ints(a, "dilations", s);
        long[] pads = ConvOps.pads(a, x.shape(), k, strides, dil, false);
        if (a.getInt("storage_order", 0) != 0)
            throw new KilnException("attribute 'storage_order' = 1 is not supported");
        boolean countPad = a.getInt("count_include_pad", 0) != 0;
        if (a.getInt("ceil_mode", 0) != 0) ceilMode(x.shape(), k, strides, dil, pads, !max && countPad);
        boolean dilated = Arrays.stream(dil).anyMatch(d -> d != 1);
        Op op;
        if (s == 2 && !dilated && k[0] == k[1] && strides[0] == strides[1] && allEqual(pads)) {
            op = max
                    ? new Op.MaxPool2d("NHWC", k[0], strides[0], pads[0])
                    : new Op.AvgPool2d("NHWC", k[0], strides[0], pads[0], countPad);
        } else {
            op = new Op.PoolNd(
                    LAYOUT[s],
                    max,
                    ShapeOps.boxed(k),
                    ShapeOps.boxed(strides),
                    ShapeOps.boxed(pads),
                    ShapeOps.boxed(dil),
                    countPad);
        }
        emit(ctx, n, op, x, s);
    }

    static void global(ImportContext ctx, NodeProto n) {
        new Attrs(n, Set.of());
        Ref x = ctx.required(n, 0);
        int s = spatialRank(x);
        boolean max = n.getOpType().equals("GlobalMaxPool");
        emit(ctx, n, !max && s == 2 ? new Op.GlobalAvgPool2d("NHWC") : new Op.GlobalPool(LAYOUT[s], max), x, s);
    }

    private static void emit(ImportContext ctx, NodeProto n, Op op, Ref x, int s) {
        if (s == 2) ctx.emit(n.getOutput(0), op, NHWC, ctx.nhwc(x));
        else ctx.emit(n.getOutput(0), op, null, ctx.plain(x));
    }

    private static int spatialRank(Ref x) {
        int s = x.rank() - 2;
        if (s < 1 || s > 3)
            throw new KilnException("pooling takes inputs of rank 3, 4 or 5 (N, C and 1-3 spatial axes), got "
                    + Arrays.toString(x.shape()));
        return s;
    }

    /**
     * ceil_mode: the last window may start in the input or the leading padding; pad after each axis to
     * cover it. ONNX counts only the declared padding in an average with count_include_pad, so a last window
     * that runs past it cannot be expressed as padding and is refused.
     */
    private static void ceilMode(long[] shape, long[] k, long[] st, long[] d, long[] pads, boolean countPad) {
        int s = k.length;
        for (int i = 0; i < s; i++) {
            long in = shape[2 + i], span = in + pads[i] + pads[i + s] - ((k[i] - 1) * d[i] + 1);
            if (span < 0)
                throw new KilnException("the window " + Arrays.toString(k) + " is larger than the padded input "
                        + Arrays.toString(shape));
            long out = Math.ceilDiv(span, st[i]) + 1;
            if ((out - 1) * st[i] >= in + pads[i]) out--;
            long extra = (out - 1) * st[i] + (k[i] - 1) * d[i] + 1 - (in + pads[i] + pads[i + s]);
            if (extra > 0 && countPad) {
                throw new KilnException("ceil_mode = 1 with count_include_pad = 1, where the last window on axis "
                        + (2 + i) + " runs " + extra
                        + " past the padding, is not supported (ONNX counts only the declared padding)");
            }
            pads[i + s] += Math.max(0, extra);
        }
    }

    private static boolean allEqual(long[] v) {
        return Arrays.stream(v).allMatch(p -> p == v[0]);
    }
}
