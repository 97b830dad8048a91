package dev.kiln.onnx;

import dev.kiln.graph.Op;
import dev.kiln.graph.Value;
import dev.kiln.ir.DType;
import dev.kiln.ir.KilnException;
import dev.kiln.onnx.Ref.ConstRef;
import dev.kiln.onnx.Ref.ValueRef;
import dev.kiln.onnx.proto.Onnx.NodeProto;
import java.util.Arrays;
import java.util.List;
import java.util.Set;

/**
 * The int8 family: QuantizeLinear, DequantizeLinear (per-tensor, per-axis or, on constants, blocked scales),
 * DynamicQuantizeLinear, QLinearMatMul and MatMulInteger ({@link QuantMatmulOps}), and the 2-D QLinearConv and
 * ConvInteger (the weight must be a constant: packed for the dot-product instructions when it fits them, {@link
 * #packedConv}, else an int32 convolution of the operands with their zero points taken off). Scales and zero points
 * must be constants known at import (as every exporter writes them), but for DynamicQuantizeLinear's, which
 * MatMulInteger reads computed. On constants the operators fold at import (an int8 weight behind a DequantizeLinear
 * becomes a float32 weight); on graph values they become {@code quantize}, {@code dynamic_qparams}, {@code
 * dequantize}, {@code matmul_packed} or {@code dense_integer} (int32 accumulation), {@code conv2d_packed} or int32
 * {@code conv2d} and {@code requantize} nodes, which fuse and tune like the rest.
 */
final class QuantOps {
    private QuantOps() {}

    static void quantizeLinear(ImportContext ctx, NodeProto n) {
        Attrs a = new Attrs(n, Set.of("axis", "saturate", "block_size", "output_dtype"));
        Ref x = ctx.required(n, 0);
        if (a.getInt("block_size", 0) != 0) {
            Const scale = Blocked.scale(ctx, n, x, 1, "y_scale");
            Const zp = zeroPoint(ctx, n, 2, scale, a);
            ctx.fold(n.getOutput(0), Blocked.quantize(constant(x, n), scale, zp, Blocked.axis(x, scale, zp, a)));
            return;
        }
        Const scale = floatConst(ctx, n, 1, "y_scale");
        Const zp = zeroPoint(ctx, n, 2, scale, a);
        int axis = perAxis(x, scale, zp, a, n.getOpType());
        if (x instanceof ConstRef c) {
            ctx.fold(n.getOutput(0), foldQuantize(c.c().toFloat(), scale, zp, axis));
            return;
        }
        emit(ctx, n, new Op.Quantize(), x, scale, zp, axis);
    }

    static void dequantizeLinear(ImportContext ctx, NodeProto n) {
        Attrs a = new Attrs(n, Set.of("axis", "block_size"));
        Ref x = ctx.required(n, 0);
        DType xt =
                x instanceof ConstRef c ? c.c().dtype() : ((ValueRef) x).value().dtype();
        if (!xt.isInt() || xt == DType.INT64)
            throw new KilnException("input 0 (x) must be int8, uint8, int16 or int32, got " + xt);
        boolean blocked = a.getInt("block_size", 0) != 0;
        Const scale = blocked ? Blocked.scale(ctx, n, x, 1, "x_scale") : floatConst(ctx, n, 1, "x_scale");
        Const zp = ctx.input(n, 2) == null
                ? Const.ofInts(xt, new long[scale.size()], scale.shape())
                : ctx.constant(n, 2, "x_zero_point");
        if (zp.dtype() != xt) throw new KilnException("x_zero_point is " + zp.dtype() + " but x is " + xt);
        if (blocked) {
            ctx.fold(n.getOutput(0), Blocked.dequantize(constant(x, n), scale, zp, Blocked.axis(x, scale, zp, a)));
            return;
        }
        int axis = perAxis(x, scale, zp, a, n.getOpType());
        if (x instanceof ConstRef c) {
            ctx.fold(n.getOutput(0), foldDequantize(c.c(), scale, zp, axis));
            return;
        }
        emit(ctx, n, new Op.Dequantize(), x, scale, zp, axis);
    }

    /**
     * DynamicQuantizeLinear: float32 x to uint8 with a scale and zero point from x's own range (widened to hold 0),
     * outputs y, y_scale and y_zero_point (scalars). On a graph value, a {@code dynamic_qparams} node (the range's
     * reduction and the two parameters, {@code Quant.dynamicQuantParams}) feeds a {@code quantize} of x; on a
     * constant it folds at import, computed the same way.
     */
    static void dynamicQuantizeLinear(ImportContext ctx, NodeProto n) {
        new Attrs(n, Set.of());
        Ref x = ctx.required(n, 0);
        if (typeOf(x) != DType.FLOAT32) throw new KilnException("input 0 (x) must be float32, got " + typeOf(x));
        String[] out = {n.getOutput(0), output(n, 1), output(n, 2)};
        if (x instanceof ConstRef c) {
            float[] data = c.c().toFloat().floats();
            float hi = 0, lo = 0;
            for (float v : data) {
                hi = Math.max(hi, v);
                lo = Math.min(lo, v);
            }
            float scale = hi == lo ? 1f : (hi - lo) / 255f;
            float zero = (float) Math.rint(Math.min(255f, Math.max(0f, -lo / scale)));
            Const s = Const.ofFloats(new float[] {scale}), z = Const.ofInts(DType.UINT8, new long[] {(long) zero});
            ctx.fold(out[0], foldQuantize(c.c().toFloat(), s.reshape(1), z.reshape(1), -1));
            if (out[1] != null) ctx.fold(out[1], s);
            if (out[2] != null) ctx.fold(out[2], z);
            return;
        }
        Value xv = ImportContext.isView(x) ? ((ValueRef) x).value() : ctx.inLayout(x, ImportContext.layoutOf(x));
        String base = out[0];
        Value p = ctx.g.node(ctx.fresh(base + "/qparams"), new Op.DynamicQuantParams(), xv);
        Value s = ctx.g.node(ctx.fresh(base + "/scale"), new Op.StridedSlice(List.of(0L), List.of(1L), List.of(1L)), p);
        Value zf = ctx.g.node(
                ctx.fresh(base + "/zero_f32"), new Op.StridedSlice(List.of(1L), List.of(1L), List.of(1L)), p);
        Value z = ctx.g.node(ctx.fresh(base + "/zero"), new Op.Cast(DType.UINT8), zf);
        emitPerTensor(ctx, n, new Op.Quantize(), x, s, z);
        if (out[1] != null) ctx.defineView(out[1], s, new long[0]);
        if (out[2] != null) ctx.defineView(out[2], z, new long[0]);
    }

    /** Output {@code i}'s name, or null when the node leaves it out (or names it ""). */
    private static String output(NodeProto n, int i) {
        return i < n.getOutputCount() && !n.getOutput(i).isEmpty() ? n.getOutput(i) : null;
    }

    private static final Set<String> CONV_ATTRS =
            Set.of("auto_pad", "dilations", "group", "kernel_shape", "pads", "strides");

    /** ConvInteger (2-D): int32 = conv(x - x_zero, w - w_zero), x's padding at its zero point. */
    static void convInteger(ImportContext ctx, NodeProto n) {
        Attrs a = new Attrs(n, CONV_ATTRS);
        Ref x = ctx.required(n, 0), w = ctx.required(n, 1);
        Const xz = optionalZero(ctx, n, 2, x, "x_zero_point"), wz = optionalZero(ctx, n, 3, w, "w_zero_point");
        if (xz.size() != 1)
            throw new KilnException("x_zero_point must be a scalar, got shape " + Arrays.toString(xz.shape()));
        integerConv(ctx, n, n.getOutput(0), a, x, w, xz, wz, null);
    }

    /**
     * QLinearConv (2-D): requantize(conv(x - x_zero, w - w_zero) + B, x_scale * w_scale / y_scale, y_zero), the
     * weight scale and zero point per tensor or per output channel, B the optional int32 bias.
     */
    static void qlinearConv(ImportContext ctx, NodeProto n) {
        Attrs a = new Attrs(n, CONV_ATTRS);
        Ref x = ctx.required(n, 0), w = ctx.required(n, 3), b = ctx.input(n, 8);
        Const xs = floatConst(ctx, n, 1, "x_scale"), ys = floatConst(ctx, n, 6, "y_scale");
        Const xz = ctx.constant(n, 2, "x_zero_point"),
                wz = ctx.constant(n, 5, "w_zero_point"),
                yz = ctx.constant(n, 7, "y_zero_point");
        if (xs.size() != 1 || xz.size() != 1)
            throw new KilnException("x_scale and x_zero_point must be scalars, got shapes "
                    + Arrays.toString(xs.shape()) + " and " + Arrays.toString(xz.shape()));
        if (ys.size() != 1 || yz.size() != 1) throw new KilnException("y_scale and y_zero_point must be scalars");
        if (yz.dtype() != DType.UINT8 && yz.dtype() != DType.INT8)
            throw new KilnException("y_zero_point must be uint8 or int8, got " + yz.dtype());
        Const ws = floatConst(ctx, n, 4, "w_scale");
        long m = w.rank() == 4 ? w.shape()[0] : -1;
        if (ws.size() != 1 && ws.size() != m)
            throw new KilnException("w_scale must be a scalar or one value per output channel (" + m + "), got shape "
                    + Arrays.toString(ws.shape()));
        float[] mult = new float[ws.size()]; // as ONNX Runtime computes it: (x_scale * w_scale) / y_scale in float32
        for (int j = 0; j < mult.length; j++) mult[j] = (float) xs.get(0) * (float) ws.get(j) / (float) ys.get(0);
        Value acc = integerConv(ctx, n, null, a, x, w, xz, wz, b);
        long channels = acc.dims()[3]; // more than m when the packed path padded the output channels
        if (mult.length > 1 && channels > mult.length) mult = Arrays.copyOf(mult, (int) channels);
        Value mv = ctx.plain(new ConstRef(Const.ofFloats(mult, mult.length)));
        Value z = ctx.plain(new ConstRef(yz.reshape(1)));
        if (channels == m) {
            ctx.emit(n.getOutput(0), new Op.Requantize(), ImportContext.NHWC, acc, mv, z);
        } else {
            Value q = ctx.g.node(ctx.fresh(n.getOutput(0) + "/padded"), new Op.Requantize(), acc, mv, z);
            firstChannels(ctx, n.getOutput(0), q, m);
        }
    }

    /**
     * ONNX output {@code out} is the first {@code co} channels of the NHWC value {@code v} (a strided slice of the
     * last axis: the packed path computes output channels in blocks of 16).
     */
    private static Value firstChannels(ImportContext ctx, String out, Value v, long co) {
        long[] d = v.dims();
        Op slice = new Op.StridedSlice(List.of(0L, 0L, 0L, 0L), List.of(1L, 1L, 1L, 1L), List.of(d[0], d[1], d[2], co));
        return ctx.emit(out, slice, ImportContext.NHWC, v).value();
    }

    /**
     * The int32 NHWC convolution of 8-bit x and a constant 8-bit weight (OIHW) with their zero points taken off
     * (x widened by cast and subtract nodes, so its padding is its zero point as ONNX says; the weight folded to
     * int32 at import), plus the int32 bias {@code b} when given; defines {@code out} when it is not null.
     */
    private static Value integerConv(
            ImportContext ctx, NodeProto n, String out, Attrs a, Ref x, Ref w, Const xz, Const wz, Ref b) {
        if (x.rank() != 4 || w.rank() != 4) {
            throw new KilnException("only 2-D convolutions are supported (input and weight of rank 4), got input "
                    + Arrays.toString(x.shape()) + " and weight " + Arrays.toString(w.shape()));
        }
        DType xt = typeOf(x), wt = typeOf(w);
        if ((xt != DType.UINT8 && xt != DType.INT8) || (wt != DType.UINT8 && wt != DType.INT8))
            throw new KilnException("x and w must be uint8 or int8, got " + xt + " and " + wt);
        if (xz.dtype() != xt || wz.dtype() != wt) {
            throw new KilnException("zero points must have their operand's type: x " + xt + " with " + xz.dtype()
                    + ", w " + wt + " with " + wz.dtype());
        }
        if (!(w instanceof ConstRef cw)) {
            throw new KilnException("the weight ('" + n.getInput(n.getOpType().equals("QLinearConv") ? 3 : 1)
                    + "') must be a constant (an initializer); a computed weight is not supported");
        }
        long[] wsh = w.shape();
        long co = wsh[0];
        if (wz.size() != 1 && wz.size() != co)
            throw new KilnException("w_zero_point must be a scalar or one value per output channel (" + co
                    + "), got shape " + Arrays.toString(wz.shape()));
        if (b != null && (b.rank() != 1 || b.shape()[0] != co || typeOf(b) != DType.INT32))
            throw new KilnException("the bias (B) must be int32 of shape [" + co + "], got " + typeOf(b) + " "
                    + Arrays.toString(b.shape()));
        Op.Conv2d conv = NnOps.conv2d(a, x.shape(), wsh);
        String name = out != null ? out : n.getOutput(0) + "/acc";
        boolean padded = co % PACKED_LANES != 0;
        Value packed = packedConv(ctx, padded && out != null ? name + "/padded" : name, conv, x, cw, xz, wz, b);
        if (packed != null && padded && out != null) return firstChannels(ctx, out, packed, co);
        if (packed != null) return packed;
        long perChannel = Const.count(wsh) / co;
        long[] centred = new long[cw.c().size()];
        for (int i = 0; i < centred.length; i++)
            centred[i] = cw.c().getLong(i) - wz.getLong(wz.size() == 1 ? 0 : (int) (i / perChannel));
        Value wv = ctx.inLayout(
                new ConstRef(Const.ofInts(DType.INT32, centred, wsh), cw.name() == null ? null : cw.name() + "/i32"),
                NnOps.OIHW_TO_HWIO);
        Value xv = widened(ctx, n, "x", ctx.nhwc(x), xz.reshape(1));
        if (b == null) return ctx.emit(name, conv, ImportContext.NHWC, xv, wv).value();
        Value c = ctx.emit(n.getOutput(0) + "/conv", conv, ImportContext.NHWC, xv, wv)
                .value();
        return ctx.emit(name, new Op.BiasAdd(3), ImportContext.NHWC, c, ctx.plain(b))
                .value();
    }

    /**
     * The convolution on the dot-product instructions' layout when it fits them: 8-bit x (int8 shifted to uint8,
     * {@code x + 128}, its zero point too), an int8 weight with zero
     * points 0 (symmetric, as ONNX Runtime's quantiser writes weights), one group, no dilation and the same stride
     * on both axes (input channels padded up to a multiple of 4, their weights 0: an RGB image's 3; output channels
     * up to a multiple of 16, weights and bias 0: a MobileNet-V2's 24-channel projections, which the caller slices
     * off after the epilogue). Then x is padded with its zero point and
     * convolved uncentred with the weight packed at import ({@code Op.Conv2dPacked}, which the tensorize rule puts
     * on VNNI), and {@code x_zero * sum(w[o])} comes off through the bias: {@code conv(x - xz, w) = conv(x, w) - xz
     * * sum(w[o])}, padding included. Returns the int32 result named {@code name}, with the padded channels, or null
     * when it does not fit (the caller then widens both operands to int32).
     */
    private static Value packedConv(
            ImportContext ctx, String name, Op.Conv2d conv, Ref x, ConstRef cw, Const xz, Const wz, Ref b) {
        Const w = cw.c();
        long[] ws = w.shape();
        long co = ws[0], ci = ws[1], kh = ws[2], kw = ws[3];
        int g = 4, lanes = PACKED_LANES;
        boolean signed = typeOf(x) == DType.INT8;
        if (!packable(typeOf(x), w.dtype(), wz, conv.groups(), conv.dilations(), conv.strides(), co)) return null;
        long cp = (ci + g - 1) / g * g; // input channels rounded up to the group: the extra weights are 0
        long cop = (co + lanes - 1) / lanes * lanes; // output channels rounded up to the lanes: weights, bias 0
        long[] bias = new long[(int) cop];
        if (b != null) {
            if (!(b instanceof ConstRef cb)) return null;
            for (int o = 0; o < co; o++) bias[o] = cb.c().getLong(o);
        }
        long[] packed = new long[(int) (cop * kh * kw * cp)];
        long zero = xz.getLong(0) + (signed ? 128 : 0);
        for (int o = 0; o < co; o++) {
            long sum = 0;
            for (int c = 0; c < ci; c++)
                for (int r = 0; r < kh; r++)
                    for (int s = 0; s < kw; s++) {
                        long v = w.getLong((int) (((o * ci + c) * kh + r) * kw + s));
                        sum += v;
                        long at =
                                ((((o / lanes * kh + r) * kw + s) * (cp / g) + c / g) * lanes + o % lanes) * g + c % g;
                        packed[(int) at] = v;
                    }
            bias[o] -= zero * sum;
            if (bias[o] < Integer.MIN_VALUE || bias[o] > Integer.MAX_VALUE) return null;
        }
        String wName = cw.name() == null ? null : cw.name() + "/packed";
        Value pw =
                ctx.plain(new ConstRef(Const.ofInts(DType.INT8, packed, cop / lanes, kh, kw, cp / g, lanes, g), wName));
        Op op = new Op.Conv2dPacked(conv.strides().get(0), conv.pads(), zero);
        Value xv = signed ? toUint8(ctx, name + "/x", ctx.nhwc(x)) : ctx.nhwc(x);
        Value acc =
                ctx.emit(name + "/uncentred", op, ImportContext.NHWC, xv, pw).value();
        Value bv = ctx.plain(new ConstRef(Const.ofInts(DType.INT32, bias, cop)));
        return ctx.emit(name, new Op.BiasAdd(3), ImportContext.NHWC, acc, bv).value();
    }

    /** The output channels of one dot-product accumulator: the packed weight's innermost block. */
    static final int PACKED_LANES = 16;

    /**
     * Whether a convolution of these operands fits {@link #packedConv}: 8-bit x, an int8 weight with every zero
     * point 0, one group, no dilation, one stride for both axes ({@code co} output channels: any number, padded to
     * a multiple of 16). (The QDQ fusion asks the same before it turns a float convolution into QLinearConv.)
     */
    static boolean packable(
            DType x, DType w, Const wz, long groups, List<Long> dilations, List<Long> strides, long co) {
        boolean symmetric = true;
        for (int i = 0; i < wz.size(); i++) symmetric &= wz.getLong(i) == 0;
        return (x == DType.UINT8 || x == DType.INT8)
                && w == DType.INT8
                && symmetric
                && groups == 1
                && dilations.stream().allMatch(d -> d == 1)
                && strides.size() == 2
                && strides.get(0).equals(strides.get(1))
                && co >= 1;
    }

    /**
     * int8 {@code v} shifted to uint8, {@code v + 128} (in int32, narrowed exactly): what the dot-product
     * instructions' unsigned operand takes; the zero point moves by the same 128.
     */
    static Value toUint8(ImportContext ctx, String base, Value v) {
        Value wide = ctx.g.node(ctx.fresh(base + "_i32"), new Op.Cast(DType.INT32), v);
        Value c = ctx.plain(new ConstRef(Const.ofInts(DType.INT32, new long[] {128}, 1)));
        Value up = ctx.g.node(ctx.fresh(base + "_shifted"), new Op.Binary(Op.BinaryKind.ADD), wide, c);
        return ctx.g.node(ctx.fresh(base + "_u8"), new Op.Cast(DType.UINT8), up);
    }

    /** Input {@code i}, an optional zero point of {@code operand}: the constant, or a scalar 0 of its type. */
    static Const optionalZero(ImportContext ctx, NodeProto n, int i, Ref operand, String what) {
        return ctx.input(n, i) == null ? Const.ofInts(typeOf(operand), new long[1], 1) : ctx.constant(n, i, what);
    }

    /** {@code int32(v) - int32(zero)}: an 8-bit operand widened, its zero point (broadcast against it) taken off. */
    static Value widened(ImportContext ctx, NodeProto n, String role, Value v, Const zero) {
        String base = n.getOutput(0) + "/" + role;
        Value wide = ctx.g.node(ctx.fresh(base + "_i32"), new Op.Cast(DType.INT32), v);
        long[] z = new long[zero.size()];
        for (int i = 0; i < z.length; i++) z[i] = zero.getLong(i);
        Value zv = ctx.plain(new ConstRef(Const.ofInts(DType.INT32, z, zero.shape())));
        return ctx.g.node(ctx.fresh(base + "_centred"), new Op.Binary(Op.BinaryKind.SUBTRACT), wide, zv);
    }

    /** The constant behind {@code x}: blocked quantisation is read for constant weights only. */
    private static Const constant(Ref x, NodeProto n) {
        if (x instanceof ConstRef c) return c.c();
        throw new KilnException("blocked quantisation (block_size) of a computed value ('" + n.getInput(0)
                + "') is not supported; Kiln folds it for constant weights only");
    }

    static DType typeOf(Ref r) {
        return r instanceof ConstRef c ? c.c().dtype() : ((ValueRef) r).value().dtype();
    }

    static Const floatConst(ImportContext ctx, NodeProto n, int i, String what) {
        Const c = ctx.constant(n, i, what);
        if (!c.isFloat()) throw new KilnException("input " + i + " (" + what + ") must be a float tensor");
        if (c.rank() > 1)
            throw new KilnException(what + " must be a scalar or 1-D, got shape " + Arrays.toString(c.shape()));
        return c;
    }

    /** QuantizeLinear's zero point, or a zero of {@code output_dtype} (default uint8) when absent. */
    private static Const zeroPoint(ImportContext ctx, NodeProto n, int i, Const scale, Attrs a) {
        if (ctx.input(n, i) != null) {
            Const zp = ctx.constant(n, i, "y_zero_point");
            DType t = zp.dtype();
            if (t != DType.INT8 && t != DType.UINT8 && t != DType.INT16 && t != DType.INT32) {
                throw new KilnException("y_zero_point must be int8, uint8, int16 or int32, got " + t);
            }
            if (a.has("output_dtype")
                    && OnnxTypes.of((int) a.getInt("output_dtype", 0), "attribute 'output_dtype'") != t) {
                throw new KilnException("attribute 'output_dtype' differs from the type of y_zero_point (" + t + ")");
            }
            return zp;
        }
        DType t = a.has("output_dtype")
                ? OnnxTypes.of((int) a.getInt("output_dtype", 0), "attribute 'output_dtype'")
                : DType.UINT8;
        return Const.ofInts(t, new long[scale.size()], scale.shape());
    }

    /** -1 for per-tensor scales, else the (checked) axis the 1-D scale runs along. */
    private static int perAxis(Ref x, Const scale, Const zp, Attrs a, String op) {
        if (!Arrays.equals(scale.shape(), zp.shape())) {
            throw new KilnException("scale " + Arrays.toString(scale.shape()) + " and zero point "
                    + Arrays.toString(zp.shape()) + " differ in shape");
        }
        if (scale.size() == 1) return -1; // a scalar or one-element scale is per-tensor, whatever 'axis' says
        int axis = NnOps.axis(a.getInt("axis", 1), x.rank());
        if (scale.size() != x.shape()[axis]) {
            throw new KilnException("per-axis scale of " + scale.size() + " values does not match axis " + axis + " of "
                    + Arrays.toString(x.shape()) + " (attribute 'axis' = " + a.getInt("axis", 1) + ")");
        }
        return axis;
    }

    /** A quantize or dequantize node on x in x's own layout (or view) with a one-element scale and zero point. */
    private static void emitPerTensor(ImportContext ctx, NodeProto n, Op op, Ref x, Value s, Value z) {
        if (ImportContext.isView(x)) {
            ctx.emitView(n.getOutput(0), op, x.shape(), ((ValueRef) x).value(), s, z);
        } else {
            int[] layout = ImportContext.layoutOf(x);
            ctx.emit(n.getOutput(0), op, layout, ctx.inLayout(x, layout), s, z);
        }
    }

    /** A quantize or dequantize node on x in x's own layout, the scale and zero point shaped to broadcast. */
    private static void emit(ImportContext ctx, NodeProto n, Op op, Ref x, Const scale, Const zp, int axis) {
        if (axis < 0) {
            emitPerTensor(
                    ctx, n, op, x, ctx.plain(new ConstRef(scale.reshape(1))), ctx.plain(new ConstRef(zp.reshape(1))));
            return;
        }
        long[] bshape = new long[x.rank()];
        Arrays.fill(bshape, 1);
        bshape[axis] = scale.size();
        int[] layout = ImportContext.layoutOf(x);
        Value s = ctx.inLayout(new ConstRef(scale.reshape(bshape)), layout),
                z = ctx.inLayout(new ConstRef(zp.reshape(bshape)), layout);
        ctx.emit(n.getOutput(0), op, layout, ctx.inLayout(x, layout), s, z);
    }

    private static int channel(long flat, long[] shape, int axis) {
        long inner = 1;
        for (int d = axis + 1; d < shape.length; d++) inner *= shape[d];
        return (int) (flat / inner % shape[axis]);
    }

    /** QuantizeLinear on a constant, with the arithmetic of {@code Quant.quantize} (float32, round half to even). */
    static Const foldQuantize(Const x, Const scale, Const zp, int axis) {
        long[] out = new long[x.size()];
        long[] shape = x.shape();
        DType t = zp.dtype();
        for (int i = 0; i < out.length; i++) {
            int c = axis < 0 ? 0 : channel(i, shape, axis);
            float q = (float) Math.rint((float) x.get(i) / (float) scale.get(c)) + (float) zp.getLong(c);
            out[i] = (long) Math.clamp(q, (float) t.minInt(), (float) t.maxInt());
        }
        return Const.ofInts(t, out, shape);
    }

    /** DequantizeLinear on a constant: {@code float32(x - zero) * scale}. */
    static Const foldDequantize(Const x, Const scale, Const zp, int axis) {
        float[] out = new float[x.size()];
        long[] shape = x.shape();
        for (int i = 0; i < out.length; i++) {
            int c = axis < 0 ? 0 : channel(i, shape, axis);
            out[i] = (float) (int) (x.getLong(i) - zp.getLong(c)) * (float) scale.get(c);
        }
        return Const.ofFloats(out, shape);
    }
}
