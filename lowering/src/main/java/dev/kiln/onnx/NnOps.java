package dev.kiln.onnx;

import static dev.kiln.onnx.ImportContext.NHWC;

import dev.kiln.graph.Op;
import dev.kiln.graph.Value;
import dev.kiln.ir.KilnException;
import dev.kiln.onnx.Ref.ConstRef;
import dev.kiln.onnx.Ref.ValueRef;
import dev.kiln.onnx.proto.Onnx.NodeProto;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;

/** Convolution, pooling, normalisation, softmax and reductions. Images (rank 4) are computed NHWC. */
final class NnOps {
    private NnOps() {}

    /** ONNX OIHW weight -> Kiln HWIO ([KH, KW, CI/groups, CO]). */
    static final int[] OIHW_TO_HWIO = {2, 3, 1, 0};

    static void conv(ImportContext ctx, NodeProto n) {
        Attrs a = new Attrs(n, Set.of("auto_pad", "dilations", "group", "kernel_shape", "pads", "strides"));
        Ref x = ctx.required(n, 0), w = ctx.required(n, 1), b = ctx.input(n, 2);
        if (x.rank() != 4) { // 1-D and 3-D
            ConvOps.conv(ctx, n);
            return;
        }
        if (w.rank() != 4) {
            throw new KilnException("a 2-D convolution needs a weight of rank 4, got input "
                    + Arrays.toString(x.shape()) + " and weight " + Arrays.toString(w.shape()));
        }
        long[] ws = w.shape();
        Op conv = conv2d(a, x.shape(), ws);
        Value xv = ctx.nhwc(x);
        Value wv = ctx.inLayout(w, OIHW_TO_HWIO);
        if (b == null) {
            ctx.emit(n.getOutput(0), conv, NHWC, xv, wv);
            return;
        }
        if (b.rank() != 1 || b.shape()[0] != ws[0])
            throw new KilnException(
                    "bias of shape " + Arrays.toString(b.shape()) + " for " + ws[0] + " output channels");
        ValueRef c = ctx.emit(n.getOutput(0) + "/conv", conv, NHWC, xv, wv);
        ctx.emit(n.getOutput(0), new Op.BiasAdd(3), NHWC, c.value(), ctx.plain(b));
    }

    /**
     * The NHWC {@code conv2d} of a 2-D Conv's attributes ({@code a}) for an input of shape {@code xs} (NCHW) and a
     * weight of shape {@code ws} (OIHW): strides, dilations, pads (auto_pad resolved) and groups, the kernel_shape
     * attribute checked against the weight.
     */
    static Op.Conv2d conv2d(Attrs a, long[] xs, long[] ws) {
        long[] kernel = a.getInts("kernel_shape");
        if (kernel != null && (kernel.length != 2 || kernel[0] != ws[2] || kernel[1] != ws[3])) {
            throw new KilnException(
                    "kernel_shape " + Arrays.toString(kernel) + " disagrees with the weight's " + Arrays.toString(ws));
        }
        long[] strides = ConvOps.ints(a, "strides", 2), dil = ConvOps.ints(a, "dilations", 2);
        long[] pads = ConvOps.pads(a, xs, new long[] {ws[2], ws[3]}, strides, dil, false);
        return new Op.Conv2d(
                "NHWC",
                List.of(strides[0], strides[1]),
                List.of(pads[0], pads[1], pads[2], pads[3]),
                List.of(dil[0], dil[1]),
                a.getInt("group", 1));
    }

    static void batchNorm(ImportContext ctx, NodeProto n) {
        Attrs a = new Attrs(n, Set.of("epsilon", "momentum", "training_mode"));
        if (a.getInt("training_mode", 0) != 0)
            throw new KilnException("attribute 'training_mode' = 1 is not supported (inference only)");
        OnnxOps.outputsAtMost(n, 1, "running mean and variance exist in training mode only");
        Ref x = ctx.required(n, 0);
        double eps = a.getFloat("epsilon", 1e-5);
        List<Value> params = new ArrayList<>();
        for (int i : new int[] {3, 4, 1, 2}) params.add(ctx.plain(ctx.required(n, i))); // Kiln: mean, var, gamma, beta
        boolean image = x.rank() == 4;
        Value xv = image ? ctx.nhwc(x) : ctx.plain(x);
        ctx.emit(
                n.getOutput(0),
                new Op.BatchNorm(image ? 3 : 1, eps),
                image ? NHWC : null,
                xv,
                params.get(0),
                params.get(1),
                params.get(2),
                params.get(3));
    }

    static void softmax(ImportContext ctx, NodeProto n) {
        Attrs a = new Attrs(n, Set.of("axis"));
        Ref x = ctx.required(n, 0);
        int axis = axis(a.getInt("axis", -1), x.rank());
        if (ImportContext.isView(x) && axis == x.rank() - 1) {
            long[] kd = ((ValueRef) x).value().dims();
            if (kd[kd.length - 1] == x.shape()[axis]) {
                ctx.emitView(n.getOutput(0), new Op.Softmax(kd.length - 1), x.shape(), ((ValueRef) x).value());
                return;
            }
        }
        ctx.emit(n.getOutput(0), new Op.Softmax(axis), null, ctx.plain(x));
    }

    static void reduceMean(ImportContext ctx, NodeProto n) {
        Attrs a = new Attrs(n, Set.of("axes", "keepdims", "noop_with_empty_axes"));
        Ref x = ctx.required(n, 0);
        long[] axes = ctx.opset >= 18
                ? (ctx.input(n, 1) == null ? null : ctx.constant(n, 1, "axes").toLongs("axes"))
                : a.getInts("axes");
        boolean keep = a.getInt("keepdims", 1) != 0;
        if (axes == null || axes.length == 0) {
            if (a.getInt("noop_with_empty_axes", 0) != 0) {
                ctx.define(n.getOutput(0), x);
                return;
            }
            axes = new long[x.rank()];
            for (int i = 0; i < axes.length; i++) axes[i] = i;
        }
        int[] layout = ImportContext.layoutOf(x);
        boolean[] reduced = new boolean[x.rank()];
        for (long ax : axes) reduced[axis(ax, x.rank())] = true;
        // on a reordered input, reduce in place when what is left reads in ONNX's order (NHWC over H, W)
        List<Integer> kept = new ArrayList<>();
        for (int d : layout) if (!reduced[d]) kept.add(d);
        boolean inPlace = keep || kept.equals(kept.stream().sorted().toList());
        int[] use = inPlace ? layout : ImportContext.identity(x.rank());
        List<Integer> kAxes = new ArrayList<>();
        for (int k = 0; k < use.length; k++) if (reduced[use[k]]) kAxes.add(k);
        Value xv = ctx.inLayout(x, use);
        ctx.emit(n.getOutput(0), new Op.Mean(kAxes, keep), keep ? use : null, xv);
    }

    static void layerNorm(ImportContext ctx, NodeProto n) {
        Attrs a = new Attrs(n, Set.of("axis", "epsilon", "stash_type"));
        OnnxOps.outputsAtMost(n, 1, "Kiln's layer norm gives no mean or inverse standard deviation");
        Ref x = ctx.required(n, 0), scale = ctx.required(n, 1), bias = ctx.input(n, 2);
        int axis = axis(a.getInt("axis", -1), x.rank());
        long[] normShape = Arrays.copyOfRange(x.shape(), axis, x.rank());
        Value s = ctx.inLayout(expand(ctx, scale, normShape, "Scale"), ImportContext.identity(normShape.length));
        Value b = bias == null
                ? ctx.plain(new ConstRef(Const.ofFloats(new float[(int) Const.count(normShape)], normShape)))
                : ctx.plain(expand(ctx, bias, normShape, "B"));
        if (ImportContext.isView(x)) { // normalise on the view's shape when it ends in the normalised axes
            long[] kd = ((ValueRef) x).value().dims();
            int t = normShape.length;
            if (t < kd.length && Arrays.equals(Arrays.copyOfRange(kd, kd.length - t, kd.length), normShape)) {
                ctx.emitView(
                        n.getOutput(0),
                        new Op.LayerNorm(t, a.getFloat("epsilon", 1e-5)),
                        x.shape(),
                        ((ValueRef) x).value(),
                        s,
                        b);
                return;
            }
        }
        ctx.emit(
                n.getOutput(0),
                new Op.LayerNorm(x.rank() - axis, a.getFloat("epsilon", 1e-5)),
                null,
                ctx.plain(x),
                s,
                b);
    }

    /** {@code r} broadcast to exactly {@code shape} (a constant, as Kiln's layer norm wants its parameters). */
    private static Ref expand(ImportContext ctx, Ref r, long[] shape, String what) {
        if (Arrays.equals(r.shape(), shape)) return r;
        if (!(r instanceof ConstRef c)) {
            throw new KilnException(what + " of shape " + Arrays.toString(r.shape())
                    + " must have the normalised shape " + Arrays.toString(shape));
        }
        return new ConstRef(ConstEval.broadcastTo(c.c(), shape, what));
    }

    static int axis(long axis, int rank) {
        long a = axis < 0 ? axis + rank : axis;
        if (a < 0 || a >= rank) throw new KilnException("axis " + axis + " is out of range for rank " + rank);
        return (int) a;
    }
}
