package dev.kiln.onnx;

import static dev.kiln.onnx.QuantOps.floatConst;
import static dev.kiln.onnx.QuantOps.optionalZero;
import static dev.kiln.onnx.QuantOps.typeOf;
import static dev.kiln.onnx.QuantOps.widened;

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
 * The int8 matmuls of {@link QuantOps}' family: QLinearMatMul and MatMulInteger. A constant 2-D B that fits the
 * dot-product instructions is packed at import for {@code matmul_packed} ({@link #packedMatmul}); any other B
 * (computed, batched, with zero points, or of other widths) is int32 arithmetic ({@code dense_integer}, or an int32
 * {@code batch_matmul} of the widened operands). QLinearMatMul adds its {@code requantize}.
 */
final class QuantMatmulOps {
    private QuantMatmulOps() {}

    /**
     * MatMulInteger: int32 = (A - a_zero) x (B - b_zero). a_zero may be computed (DynamicQuantizeLinear's
     * y_zero_point, as ONNX Runtime's dynamic quantisation writes it) when B is 2-D.
     */
    static void matmulInteger(ImportContext ctx, NodeProto n) {
        new Attrs(n, Set.of());
        Ref a = ctx.required(n, 0), b = ctx.required(n, 1);
        Const bz = optionalZero(ctx, n, 3, b, "b_zero_point");
        Const az;
        Value azComputed = null;
        if (ctx.input(n, 2) instanceof ValueRef v) {
            if (Const.count(v.shape()) != 1 || b.rank() != 2)
                throw new KilnException("a computed a_zero_point ('" + n.getInput(2) + "') must be a scalar with a "
                        + "2-D B, got shapes " + Arrays.toString(v.shape()) + " and " + Arrays.toString(b.shape()));
            azComputed = ctx.asShape(v, 1);
            az = Const.ofInts(v.value().dtype(), new long[1], 1); // its type for the checks; the value is computed
        } else {
            az = optionalZero(ctx, n, 2, a, "a_zero_point");
        }
        if (az.size() != 1)
            throw new KilnException("a_zero_point must be a scalar (per-row zero points are not supported), got shape "
                    + Arrays.toString(az.shape()));
        checkOperands(a, b);
        integerMatmul(ctx, n, n.getOutput(0), a, b, az, azComputed, bParam(bz, b, "b_zero_point"));
    }

    /** QLinearMatMul: requantize((A - a_zero) x (B - b_zero), a_scale * b_scale / y_scale, y_zero). */
    static void qlinearMatmul(ImportContext ctx, NodeProto n) {
        new Attrs(n, Set.of());
        Ref a = ctx.required(n, 0), b = ctx.required(n, 3);
        Const as = floatConst(ctx, n, 1, "a_scale"), ys = floatConst(ctx, n, 6, "y_scale");
        Const az = ctx.constant(n, 2, "a_zero_point"),
                bz = ctx.constant(n, 5, "b_zero_point"),
                yz = ctx.constant(n, 7, "y_zero_point");
        if (as.size() != 1 || az.size() != 1)
            throw new KilnException("a_scale and a_zero_point must be scalars (per-row quantisation of A is not "
                    + "supported; ONNX Runtime refuses it too), got shapes " + Arrays.toString(as.shape()) + " and "
                    + Arrays.toString(az.shape()));
        if (ys.size() != 1 || yz.size() != 1) throw new KilnException("y_scale and y_zero_point must be scalars");
        checkOperands(a, b);
        Const bsRaw = ctx.constant(n, 4, "b_scale");
        if (!bsRaw.isFloat()) throw new KilnException("input 4 (b_scale) must be a float tensor");
        Const bs = bParam(bsRaw, b, "b_scale");
        float[] mult = new float[bs.size()]; // as ONNX Runtime computes it: (a_scale * b_scale) / y_scale in float32
        for (int j = 0; j < mult.length; j++) mult[j] = (float) as.get(0) * (float) bs.get(j) / (float) ys.get(0);
        Value acc = integerMatmul(ctx, n, null, a, b, az, null, bParam(bz, b, "b_zero_point"));
        long[] outShape = outShape(a, b);
        Value m = ctx.plain(new ConstRef(Const.ofFloats(mult, bs.shape())));
        Value z = ctx.plain(new ConstRef(yz.reshape(1)));
        ctx.emitView(n.getOutput(0), new Op.Requantize(), outShape, acc, m, z);
    }

    /** The operands' ranks and inner extents. */
    private static void checkOperands(Ref a, Ref b) {
        if (a.rank() < 2 || b.rank() < 2) {
            throw new KilnException("A and B must have rank 2 or more, got " + Arrays.toString(a.shape()) + " x "
                    + Arrays.toString(b.shape()));
        }
        if (b.shape()[b.rank() - 2] != a.shape()[a.rank() - 1])
            throw new KilnException(
                    "inner extents differ: " + Arrays.toString(a.shape()) + " x " + Arrays.toString(b.shape()));
    }

    /**
     * B's scale or zero point {@code c} checked and put in the form the kernels read: {@code [1]} (one
     * value), {@code [N]} (one per column of B, the same for every batch) or, for a batched B
     * {@code [..., K, N]}, {@code [batch, 1, N]} with the batch axes flattened (one per batch and column).
     * ONNX and ONNX Runtime allow a scalar, one value, {@code [N]} or {@code [1, N]} for a 2-D B, and
     * {@code [..., 1, N]} with B's batch extents for a batched one; Kiln takes every shape that broadcasts
     * to {@code [..., 1, N]} (a batched B's {@code [N]} too, which ONNX Runtime refuses).
     */
    static Const bParam(Const c, Ref b, String what) {
        if (c.size() == 1) return c.reshape(1);
        long[] bs = b.shape(), cs = c.shape();
        int r = bs.length;
        long[] want = bs.clone();
        want[r - 2] = 1; // one value per column (and batch): never per row of B
        boolean ok = cs.length <= r;
        boolean perBatch = false;
        for (int d = 0; ok && d < cs.length; d++) {
            long have = cs[d], full = want[d + r - cs.length];
            ok = have == 1 || have == full;
            if (d + r - cs.length < r - 2 && have != 1) perBatch = true;
        }
        if (!ok) {
            throw new KilnException(what + " must be a scalar, one value per column of B ([" + bs[r - 1] + "]"
                    + (r > 2 ? "" : " or [1, " + bs[r - 1] + "]") + ")"
                    + (r > 2 ? " or one per batch and column (" + Arrays.toString(want) + ")" : "") + ", got shape "
                    + Arrays.toString(cs));
        }
        if (!perBatch) return c.reshape(cs[cs.length - 1]);
        long batch = Const.count(Arrays.copyOf(bs, r - 2));
        return ConstEval.broadcastTo(c, want, what).reshape(batch, 1, bs[r - 1]);
    }

    /**
     * The int32 product of 8-bit A (any rank, rows flattened) and a 2-D B as a dense_integer node
     * (B transposed to [N, K]: at import when constant, by a transpose node otherwise); defines
     * {@code out} when it is not null. Returns the [rows, N] accumulator.
     */
    private static Value integerMatmul(
            ImportContext ctx, NodeProto n, String out, Ref a, Ref b, Const az, Value azComputed, Const bz) {
        long[] as = a.shape();
        long k = as[as.length - 1];
        if (az.dtype() != typeOf(a) || bz.dtype() != typeOf(b)) {
            throw new KilnException("zero points must have their operand's type: A " + typeOf(a) + " with " + az.dtype()
                    + ", B " + typeOf(b) + " with " + bz.dtype());
        }
        if (b.rank() > 2) return batchedIntegerMatmul(ctx, n, out, a, b, az, bz);
        long rows = Const.count(as) / k;
        if (b instanceof ConstRef cb) {
            Value packed = packedMatmul(ctx, n, out, outShape(a, b), ctx.asShape(a, rows, k), cb, az, azComputed, bz);
            if (packed != null) return packed;
        }
        Value w;
        if (b instanceof ConstRef cb) {
            w = ctx.plain(new ConstRef(cb.c().transpose(1, 0), cb.name() == null ? null : cb.name() + "/T"));
        } else {
            w = ctx.g.node(ctx.fresh(ctx.plain(b).name() + "/T"), new Op.Transpose(List.of(1, 0)), ctx.plain(b));
        }
        Value zero = azComputed != null ? azComputed : ctx.plain(new ConstRef(az.reshape(1)));
        Value[] ins = {ctx.asShape(a, rows, k), w, zero, ctx.plain(new ConstRef(bz))};
        if (out != null)
            return ctx.emitView(out, new Op.DenseInteger(), outShape(a, b), ins).value();
        return ctx.g.node(ctx.fresh(n.getOutput(0) + "/acc"), new Op.DenseInteger(), ins);
    }

    /**
     * The product on the dot-product instructions' layout when it fits them: B an 8-bit constant whose zero points
     * are its type's middle or 0 (int8 with 0, symmetric as ONNX Runtime's quantiser writes weights; uint8 with 128,
     * shifted to int8 with 0), N a multiple of 16. An int8 A is shifted to uint8 ({@code a + 128}, its zero point
     * too); B is packed at import to {@code [N/16, K/4, 16, 4]} (K rounded up, the extra rows 0) and {@code
     * a_zero * sum_k(b[k, n])} comes off through an int32 bias: {@code (a - az) x b = a x b - az * colsum(b)}. The
     * graph op {@code matmul_packed} is what the tensorize rule puts on VNNI. Returns the [rows, N] accumulator
     * (defining {@code out} when it is not null), or null when it does not fit.
     */
    private static Value packedMatmul(
            ImportContext ctx,
            NodeProto n,
            String out,
            long[] shape,
            Value x,
            ConstRef cb,
            Const az,
            Value azComputed,
            Const bz) {
        Const b = cb.c();
        long k = b.shape()[0], cols = b.shape()[1];
        int g = 4, lanes = 16;
        long bShift = b.dtype() == DType.UINT8 ? -128 : 0, aShift = x.dtype() == DType.INT8 ? 128 : 0;
        if (!packable(b.dtype(), bz, cols)) return null;
        long kp = (k + g - 1) / g * g, zero = az.getLong(0) + aShift;
        long[] packed = new long[(int) (kp * cols)], bias = new long[(int) cols], colsum = new long[(int) cols];
        boolean anyBias = false;
        for (int j = 0; j < cols; j++) {
            long sum = 0;
            for (int r = 0; r < k; r++) {
                long v = b.getLong((int) (r * cols + j)) + bShift;
                sum += v;
                packed[(int) ((((j / lanes) * (kp / g) + r / g) * lanes + j % lanes) * g + r % g)] = v;
            }
            colsum[j] = sum;
            bias[j] = -zero * sum;
            if (bias[j] < Integer.MIN_VALUE || bias[j] > Integer.MAX_VALUE) return null;
            anyBias |= bias[j] != 0;
        }
        String base = n.getOutput(0);
        if (aShift != 0) x = QuantOps.toUint8(ctx, base + "/a", x); // int8 -> uint8: a + 128
        String wName = cb.name() == null ? null : cb.name() + "/packed";
        Value pw = ctx.plain(new ConstRef(Const.ofInts(DType.INT8, packed, cols / lanes, kp / g, lanes, g), wName));
        Op mm = new Op.MatmulPacked();
        Value bv = anyBias ? ctx.plain(new ConstRef(Const.ofInts(DType.INT32, bias, cols))) : null, term = null;
        if (azComputed != null) { // a computed zero point: - int32(az) * colsum(B), after the shift's bias
            Value zi = ctx.g.node(ctx.fresh(base + "/a_zero_i32"), new Op.Cast(DType.INT32), azComputed);
            Value cs = ctx.plain(new ConstRef(Const.ofInts(DType.INT32, colsum, cols), base + "/b_colsum"));
            term = ctx.g.node(ctx.fresh(base + "/a_zero_term"), new Op.Binary(Op.BinaryKind.MULTIPLY), zi, cs);
        }
        if (bv == null && term == null) {
            if (out != null) return ctx.emitView(out, mm, shape, x, pw).value();
            return ctx.g.node(ctx.fresh(base + "/acc"), mm, x, pw);
        }
        Value acc = ctx.g.node(ctx.fresh(base + "/uncentred"), mm, x, pw);
        if (bv != null && term != null) acc = ctx.g.node(ctx.fresh(base + "/biased"), new Op.BiasAdd(1), acc, bv);
        Op last = term != null ? new Op.Binary(Op.BinaryKind.SUBTRACT) : new Op.BiasAdd(1);
        Value rhs = term != null ? term : bv;
        if (out != null) return ctx.emitView(out, last, shape, acc, rhs).value();
        return ctx.g.node(ctx.fresh(base + "/acc"), last, acc, rhs);
    }

    /**
     * Whether a constant 2-D B of type {@code b} with zero points {@code bz} and {@code cols} columns fits {@link
     * #packedMatmul}: every zero point its type's middle (int8 0, uint8 128), columns a multiple of 16. (The QDQ
     * fusion asks the same before it turns a float MatMul into QLinearMatMul.)
     */
    static boolean packable(DType b, Const bz, long cols) {
        if (b != DType.INT8 && b != DType.UINT8) return false;
        long middle = b == DType.UINT8 ? 128 : 0;
        for (int i = 0; i < bz.size(); i++) if (bz.getLong(i) != middle) return false;
        return cols % 16 == 0;
    }

    /**
     * A batched B ({@code [..., K, N]}, batch axes equal to A's): both operands, batch axes flattened,
     * widened to int32 with their zero points subtracted ({@code bz} of {@link #bParam}'s forms: per
     * tensor, per column, or per batch and column), then an int32 batch_matmul, so every product and
     * sum is exact as in ONNX.
     */
    private static Value batchedIntegerMatmul(
            ImportContext ctx, NodeProto n, String out, Ref a, Ref b, Const az, Const bz) {
        long[] as = a.shape(), bs = b.shape();
        if (as.length != bs.length
                || !Arrays.equals(Arrays.copyOf(as, as.length - 2), Arrays.copyOf(bs, bs.length - 2)))
            throw new KilnException("a batched B needs the same batch axes as A (no broadcasting), got "
                    + Arrays.toString(as) + " x " + Arrays.toString(bs));
        long m = as[as.length - 2], k = as[as.length - 1], nOut = bs[bs.length - 1];
        long batch = Const.count(as) / (m * k);
        Value x = widened(ctx, n, "a", ctx.asShape(a, batch, m, k), az.reshape(1)),
                y = widened(ctx, n, "b", ctx.asShape(b, batch, k, nOut), bz);
        if (out != null)
            return ctx.emitView(out, new Op.BatchMatmul(false, false), outShape(a, b), x, y)
                    .value();
        return ctx.g.node(ctx.fresh(n.getOutput(0) + "/acc"), new Op.BatchMatmul(false, false), x, y);
    }

    private static long[] outShape(Ref a, Ref b) {
        long[] s = a.shape();
        s[s.length - 1] = b.shape()[b.rank() - 1];
        return s;
    }
}
