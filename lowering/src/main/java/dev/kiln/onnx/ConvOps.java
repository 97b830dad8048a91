package dev.kiln.onnx;

import dev.kiln.graph.Op;
import dev.kiln.ir.KilnException;
import dev.kiln.nn.ConvParams;
import dev.kiln.onnx.Ref.ValueRef;
import dev.kiln.onnx.proto.Onnx.NodeProto;
import java.util.Arrays;
import java.util.List;
import java.util.Set;

/**
 * Convolutions other than the 2-D ones {@link NnOps} keeps NHWC: 1-D and 3-D Conv, and 2-D
 * ConvTranspose, computed in ONNX's own layout (NCL / NCDHW / NCHW data, OIL / OIDHW / IOHW
 * weights) through {@code Op.ConvNd}; a bias becomes a bias add on the channel axis.
 */
final class ConvOps {
    private ConvOps() {}

    private static final String[] DATA = {null, "NCL", "NCHW", "NCDHW"}, WEIGHT = {null, "OIL", "OIHW", "OIDHW"};

    /** Conv with 1 or 3 spatial axes. */
    static void conv(ImportContext ctx, NodeProto n) {
        Attrs a = new Attrs(n, Set.of("auto_pad", "dilations", "group", "kernel_shape", "pads", "strides"));
        Ref x = ctx.required(n, 0), w = ctx.required(n, 1), b = ctx.input(n, 2);
        int s = x.rank() - 2;
        if ((s != 1 && s != 3) || w.rank() != x.rank()) {
            throw new KilnException("Conv takes inputs of rank 3, 4 or 5 with a weight of the same rank, got "
                    + Arrays.toString(x.shape()) + " and " + Arrays.toString(w.shape()));
        }
        long[] k = Arrays.copyOfRange(w.shape(), 2, w.rank());
        checkKernel(a, k, w.shape());
        long[] strides = ints(a, "strides", s), dil = ints(a, "dilations", s);
        long[] pads = pads(a, x.shape(), k, strides, dil, false);
        ConvParams p = new ConvParams(
                boxed(strides),
                boxed(Arrays.copyOf(pads, s)),
                boxed(Arrays.copyOfRange(pads, s, 2 * s)),
                boxed(dil),
                a.getInt("group", 1));
        emit(ctx, n, new Op.ConvNd(DATA[s], WEIGHT[s], p, false, List.of()), x, w, b, w.shape()[0]);
    }

    /** 2-D ConvTranspose (weight [CI, CO/groups, KH, KW]). */
    static void convTranspose(ImportContext ctx, NodeProto n) {
        Attrs a = new Attrs(
                n,
                Set.of(
                        "auto_pad",
                        "dilations",
                        "group",
                        "kernel_shape",
                        "output_padding",
                        "output_shape",
                        "pads",
                        "strides"));
        Ref x = ctx.required(n, 0), w = ctx.required(n, 1), b = ctx.input(n, 2);
        if (x.rank() != 4 || w.rank() != 4) {
            throw new KilnException("only 2-D ConvTranspose is supported (input rank 4), got input "
                    + Arrays.toString(x.shape()) + " and weight " + Arrays.toString(w.shape()));
        }
        long[] k = {w.shape()[2], w.shape()[3]};
        checkKernel(a, k, w.shape());
        long[] strides = ints(a, "strides", 2), dil = ints(a, "dilations", 2), outPad = ints(a, "output_padding", 2);
        for (int i = 0; i < 2; i++) {
            if (outPad[i] < 0 || outPad[i] >= Math.max(strides[i], dil[i])) {
                throw new KilnException("output_padding " + Arrays.toString(outPad)
                        + " must be smaller than the stride or the dilation");
            }
        }
        long[] pads = transposePads(a, x.shape(), k, strides, dil, outPad);
        long groups = a.getInt("group", 1);
        ConvParams p = new ConvParams(
                boxed(strides),
                boxed(Arrays.copyOf(pads, 2)),
                boxed(Arrays.copyOfRange(pads, 2, 4)),
                boxed(dil),
                groups);
        emit(ctx, n, new Op.ConvNd("NCHW", "IOHW", p, true, boxed(outPad)), x, w, b, w.shape()[1] * groups);
    }

    /**
     * ConvTranspose's [begin..., end...] padding: explicit pads, or the total padding that gives the requested
     * {@code output_shape} (or {@code input * stride} under SAME_UPPER/SAME_LOWER) split as ONNX says: under
     * SAME_UPPER the odd element goes to the end, otherwise to the beginning.
     */
    private static long[] transposePads(Attrs a, long[] in, long[] k, long[] st, long[] d, long[] outPad) {
        int s = k.length;
        String auto = a.getString("auto_pad", "NOTSET");
        long[] want = a.getInts("output_shape");
        if (want == null && !auto.startsWith("SAME_")) return pads(a, in, k, st, d, true);
        if (want != null && want.length == s + 2) want = Arrays.copyOfRange(want, 2, s + 2);
        if (want != null && want.length != s)
            throw new KilnException("attribute 'output_shape' must list " + s + " spatial extents (or " + (s + 2)
                    + " with batch and channels), got " + Arrays.toString(want));
        long[] p = new long[2 * s];
        for (int i = 0; i < s; i++) {
            long out = want != null ? want[i] : in[2 + i] * st[i];
            long full = st[i] * (in[2 + i] - 1) + outPad[i] + (k[i] - 1) * d[i] + 1;
            long total = full - out;
            if (total < 0)
                throw new KilnException("output_shape " + Arrays.toString(want != null ? want : new long[] {out})
                        + " asks for " + out + " elements along spatial axis " + i + ", more than the " + full
                        + " the transposed convolution makes; raise output_padding instead");
            boolean upper = auto.equals("SAME_UPPER");
            p[i] = upper ? total / 2 : total - total / 2;
            p[i + s] = total - p[i];
        }
        return p;
    }

    private static void emit(ImportContext ctx, NodeProto n, Op conv, Ref x, Ref w, Ref b, long channels) {
        if (b == null) {
            ctx.emit(n.getOutput(0), conv, null, ctx.plain(x), ctx.plain(w));
            return;
        }
        if (b.rank() != 1 || b.shape()[0] != channels) {
            throw new KilnException(
                    "bias of shape " + Arrays.toString(b.shape()) + " for " + channels + " output channels");
        }
        ValueRef c = ctx.emit(n.getOutput(0) + "/conv", conv, null, ctx.plain(x), ctx.plain(w));
        ctx.emit(n.getOutput(0), new Op.BiasAdd(1), null, c.value(), ctx.plain(b));
    }

    private static void checkKernel(Attrs a, long[] k, long[] ws) {
        long[] kernel = a.getInts("kernel_shape");
        if (kernel != null && !Arrays.equals(kernel, k)) {
            throw new KilnException(
                    "kernel_shape " + Arrays.toString(kernel) + " disagrees with the weight's " + Arrays.toString(ws));
        }
    }

    static long[] ints(Attrs a, String name, int s) {
        long[] v = a.getInts(name);
        if (v == null) {
            v = new long[s];
            Arrays.fill(v, name.equals("output_padding") ? 0 : 1);
            return v;
        }
        if (v.length != s)
            throw new KilnException("attribute '" + name + "' must list " + s + " values, got " + Arrays.toString(v));
        return v;
    }

    /** [begin..., end...] from pads or auto_pad (SAME for Conv and pooling; ConvTranspose: see transposePads). */
    static long[] pads(Attrs a, long[] in, long[] k, long[] st, long[] d, boolean transposed) {
        int s = k.length;
        String auto = a.getString("auto_pad", "NOTSET");
        switch (auto) {
            case "NOTSET" -> {
                long[] p = a.getInts("pads");
                if (p == null) return new long[2 * s];
                if (p.length != 2 * s)
                    throw new KilnException(
                            "attribute 'pads' must list " + 2 * s + " values, got " + Arrays.toString(p));
                return p;
            }
            case "VALID" -> {
                return new long[2 * s];
            }
            case "SAME_UPPER", "SAME_LOWER" -> {
                if (transposed)
                    throw new KilnException(
                            "attribute 'auto_pad' = '" + auto + "' is not supported for ConvTranspose (give pads)");
                long[] p = new long[2 * s];
                for (int i = 0; i < s; i++) {
                    long out = Math.ceilDiv(in[2 + i], st[i]);
                    long total = Math.max(0, (out - 1) * st[i] + (k[i] - 1) * d[i] + 1 - in[2 + i]);
                    long small = total / 2;
                    p[i] = auto.equals("SAME_UPPER") ? small : total - small;
                    p[i + s] = total - p[i];
                }
                return p;
            }
            default ->
                throw new KilnException(
                        "attribute 'auto_pad' = '" + auto + "' is not one of NOTSET, VALID, SAME_UPPER, SAME_LOWER");
        }
    }

    private static List<Long> boxed(long[] v) {
        return ShapeOps.boxed(v);
    }
}
