package dev.kiln.nn;

import static dev.kiln.te.Te.select;
import static dev.kiln.te.Te.sum;

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
 * Transposed convolutions (the gradient of a convolution with respect to its input, "deconvolution"),
 * with PyTorch's ConvTranspose semantics: every input element {@code x[ih]} adds
 * {@code x[ih] * w[kh]} to {@code out[ih * stride - padBefore + kh * dilation]}; the output extent is
 * {@code (in - 1) * stride - padBefore - padAfter + dilation * (K - 1) + outputPadding + 1}.
 *
 * <p>Two formulations, chosen per spatial axis:
 * <ul>
 *   <li>Stride above 1 and dilation 1 (the common case, e.g. the T2D workloads: K 4, stride 2,
 *       pad 1): the sub-pixel ("phase") decomposition. With {@code t = o + padBefore}, output
 *       {@code o} receives {@code x[i] * w[k]} for {@code k = t mod stride + stride * j} and
 *       {@code i = t div stride - j}, {@code j = 0 .. ceil(K / stride) - 1}: a correlation over
 *       {@code ceil(K / stride)} taps whose weights depend on the output's phase
 *       {@code t mod stride}, with the kernel not flipped. No multiplication touches a zero that
 *       the stride would insert, so it does {@code 1 / stride} of the other form's work per axis
 *       (a quarter for a 2-D stride 2); oneDNN's deconvolution (a backward-data convolution) and
 *       PyTorch's (oneDNN, or a GEMM and col2im) likewise never multiply by inserted zeros. A
 *       "pad" stage zero-pads the input so that every read is in bounds; when the stride does not
 *       divide K, the last tap of some phases falls past the kernel, and the reduction's condition
 *       ({@code k < K}) leaves it out, so the common case (stride divides K) has neither a
 *       condition nor a select in the operator.</li>
 *   <li>Otherwise (stride 1, or dilation above 1) as TVM builds it: "dilate_pad" spreads the
 *       input {@code stride} apart with zeros in between and pads it by
 *       {@code dilation * (K - 1) - padBefore} before (and what the output needs after) using
 *       index arithmetic; then the operator correlates that with the spatially flipped kernel.
 *       At stride 1 this is a plain correlation; with a stride it multiplies by the inserted zeros.</li>
 * </ul>
 * One stage prepares the input for every axis: "pad" when every axis takes the phase form,
 * "dilate_pad" otherwise; it is left out when it would be the identity. The reduce axes follow
 * the weight layout's order (rc and one per spatial axis, named "r" and the axis letter: the
 * kernel taps, or the taps of one phase).
 *
 * <p>Weight layouts: {@link #conv2dTransposeNhwc} takes [KH, KW, CI, CO/groups] (TVM's layout for
 * the Ansor T2D workloads); {@link #conv2dTransposeNchw} takes [CI, CO/groups, KH, KW] (PyTorch's
 * and TVM's). With groups, output channel {@code co} of group {@code g = co / (CO/groups)} sums
 * over input channels {@code g * CI/groups ... (g + 1) * CI/groups - 1}.
 */
public final class ConvTranspose {
    private ConvTranspose() {}

    /**
     * Transposed conv2d, data [N, H, W, CI], weight [KH, KW, CI, CO/groups], output [N, OH, OW, CO].
     *
     * @param outputPadding extra rows/columns at the end of the output, one value for both axes or
     *                      one per axis (H, W); each must be smaller than the stride or the dilation
     */
    @Operator("Transposed conv2d, data [N, H, W, CI], weight [KH, KW, CI, CO/groups], output [N, OH, OW, CO].")
    public static Tensor conv2dTransposeNhwc(Tensor data, Tensor weight, ConvParams p, long... outputPadding) {
        return convTranspose("conv2d_transpose_nhwc", data, weight, "NHWC", "HWIO", p, outputPadding);
    }

    /** Transposed conv2d NHWC with the given stride and symmetric padding, as the T2D workloads. */
    public static Tensor conv2dTransposeNhwc(Tensor data, Tensor weight, long stride, long pad) {
        return conv2dTransposeNhwc(data, weight, ConvParams.of(2, stride, pad));
    }

    /**
     * Transposed conv2d, data [N, CI, H, W], weight [CI, CO/groups, KH, KW], output [N, CO, OH, OW];
     * {@code outputPadding} as for {@link #conv2dTransposeNhwc}.
     */
    @Operator("Transposed conv2d, data [N, CI, H, W], weight [CI, CO/groups, KH, KW], output [N, CO, OH, OW].")
    public static Tensor conv2dTransposeNchw(Tensor data, Tensor weight, ConvParams p, long... outputPadding) {
        return convTranspose("conv2d_transpose_nchw", data, weight, "NCHW", "IOHW", p, outputPadding);
    }

    /** Transposed conv2d NCHW with the given stride and symmetric padding. */
    public static Tensor conv2dTransposeNchw(Tensor data, Tensor weight, long stride, long pad) {
        return conv2dTransposeNchw(data, weight, ConvParams.of(2, stride, pad));
    }

    /**
     * A transposed convolution in any layout (see {@link Conv#conv} for the layout letters; here the
     * weight's I axis has extent CI and its O axis CO/groups).
     */
    @Operator("A transposed convolution in any layout (weight I axis CI, O axis CO/groups).")
    public static Tensor convTranspose(
            String name,
            Tensor data,
            Tensor weight,
            String dataLayout,
            String kernelLayout,
            ConvParams p,
            long... outputPadding) {
        ConvLayout l = ConvLayout.parse(name, dataLayout, kernelLayout);
        l.requireRanks(data, weight);
        ConvChecks.requireSameDType(name, data, weight);
        ConvChecks.checkWindow(name, p, l.spatialNames());
        int s = l.spatialRank();
        long[] outPad = outputPadding(name, l, p, outputPadding);
        long groups = p.groups();
        long ci = data.dim(l.channel);
        long wi = weight.dim(l.kernelIn);
        if (wi != ci) {
            throw new KilnException(name + ": " + ConvChecks.axis("input", data, l.channel, dataLayout) + " has " + ci
                    + " channels but " + ConvChecks.axis("weight", weight, l.kernelIn, kernelLayout) + " has " + wi);
        }
        if (ci % groups != 0) {
            throw new KilnException(name + ": groups " + groups + " does not divide the " + ci + " input channels of "
                    + ConvChecks.axis("input", data, l.channel, dataLayout));
        }
        long coPerGroup = weight.dim(l.kernelOut);
        long ciPerGroup = ci / groups;
        long[] kernel = new long[s];
        long[] out = new long[data.rank()];
        out[l.batch] = data.dim(l.batch);
        out[l.channel] = coPerGroup * groups;
        for (int i = 0; i < s; i++) {
            kernel[i] = weight.dim(l.kernelSpatial[i]);
            out[l.dataSpatial[i]] = ConvOutput.transposedSize(
                    name,
                    l.spatialName(i),
                    data.dim(l.dataSpatial[i]),
                    kernel[i],
                    p.stride(i),
                    p.padBefore(i),
                    p.padAfter(i),
                    p.dilation(i),
                    outPad[i]);
        }
        Axis[] ax = new Axis[s];
        for (int i = 0; i < s; i++) ax[i] = Axis.of(p, i, data.dim(l.dataSpatial[i]), kernel[i], out[l.dataSpatial[i]]);
        Tensor src = sourceStage(data, l, ax);

        IterVar rc = Te.reduceAxis(ciPerGroup, "rc");
        IterVar[] r = new IterVar[s];
        for (int i = 0; i < s; i++)
            r[i] = Te.reduceAxis(ax[i].taps(), "r" + l.spatialName(i).toLowerCase());
        List<IterVar> axes = new ArrayList<>();
        for (int k = 0; k < kernelLayout.length(); k++) {
            if (k == l.kernelIn) axes.add(rc);
            for (int i = 0; i < s; i++) if (l.kernelSpatial[i] == k) axes.add(r[i]);
        }
        return Te.computeN(name, name, Shape.of(out), idx -> {
            Expr[] di = new Expr[data.rank()];
            Expr[] wIdx = new Expr[weight.rank()];
            Expr oc = idx.get(l.channel);
            Expr ic = groups == 1 ? rc : oc.floordiv(coPerGroup).mul(ciPerGroup).add(rc);
            di[l.batch] = idx.get(l.batch);
            di[l.channel] = ic;
            wIdx[l.kernelIn] = ic;
            wIdx[l.kernelOut] = groups == 1 ? oc : oc.floormod(coPerGroup);
            Expr where = null;
            for (int i = 0; i < s; i++) {
                Axis a = ax[i];
                Expr o = idx.get(l.dataSpatial[i]);
                if (a.phase()) {
                    // out[o] gets x[i] * w[k] for i * s + k = o + pb: k = (o + pb) mod s + s * r,
                    // i = (o + pb) div s - r; the kernel is not flipped in this form
                    Expr t = a.padBefore() == 0 ? o : o.add(a.padBefore());
                    Expr row = t.floordiv(a.stride()).sub(r[i]);
                    di[l.dataSpatial[i]] = a.before() == 0 ? row : row.add(a.before());
                    Expr k = t.floormod(a.stride()).add(r[i].mul(a.stride()));
                    wIdx[l.kernelSpatial[i]] = k;
                    // the last tap of some phases falls past the kernel when s does not divide K
                    if (a.kernel() % a.stride() != 0) where = and(where, k.lt(a.kernel()));
                } else {
                    di[l.dataSpatial[i]] = ConvChecks.window(o, 1, r[i], a.dilation());
                    // flipped kernel: K - 1 - r
                    wIdx[l.kernelSpatial[i]] =
                            Literals.of(r[i].dtype(), a.kernel() - 1).sub(r[i]);
                }
            }
            return sum(axes, src.at(Arrays.asList(di)).mul(weight.at(Arrays.asList(wIdx))), where);
        });
    }

    /**
     * How the operator reads the input along one spatial axis (input extent {@code in}), with
     * {@code taps} reduction steps. A phase axis (stride above 1, dilation 1) reads the input
     * padded by {@code before = max(0, taps - 1 - padBefore div stride)} and by {@code after}, what
     * the last output's first tap needs; the other axes read it spread {@code stride} apart and
     * shifted by {@code before = dilation * (K - 1) - padBefore} (negative when it crops). The
     * source stage is {@code size} long along the axis.
     */
    private record Axis(
            long in,
            long kernel,
            long stride,
            long padBefore,
            long dilation,
            boolean phase,
            long taps,
            long before,
            long after,
            long size) {
        static Axis of(ConvParams p, int i, long in, long kernel, long out) {
            long s = p.stride(i);
            long pb = p.padBefore(i);
            long d = p.dilation(i);
            if (s > 1 && d == 1) {
                long taps = Math.ceilDiv(kernel, s);
                long before = Math.max(0, taps - 1 - pb / s);
                long after = Math.max(0, (out - 1 + pb) / s - (in - 1));
                return new Axis(in, kernel, s, pb, d, true, taps, before, after, in + before + after);
            }
            long before = d * (kernel - 1) - pb;
            return new Axis(in, kernel, s, pb, d, false, kernel, before, 0, out + d * (kernel - 1));
        }

        /** Whether the source stage is the input itself along this axis. */
        boolean identity() {
            return phase ? before == 0 && after == 0 : stride == 1 && before == 0 && size == in;
        }
    }

    private static long[] outputPadding(String name, ConvLayout l, ConvParams p, long[] given) {
        int s = l.spatialRank();
        long[] op = new long[s];
        if (given.length == 1) Arrays.fill(op, given[0]);
        else if (given.length == s) op = given.clone();
        else if (given.length != 0) {
            throw new KilnException(name + ": output padding has " + given.length
                    + " values; give none, one, or one per spatial axis (" + s + ")");
        }
        for (int i = 0; i < s; i++) {
            if (op[i] < 0 || (op[i] >= p.stride(i) && op[i] >= p.dilation(i))) {
                throw new KilnException(name + ": output padding along " + l.spatialName(i) + " is " + op[i]
                        + "; it must be non-negative and smaller than the stride (" + p.stride(i)
                        + ") or the dilation ("
                        + p.dilation(i) + ")");
            }
        }
        return op;
    }

    /**
     * The tensor the operator reads: the input, or a stage that pads it along the phase axes (a
     * position {@code y} holds {@code data[y - before]} when that is inside the input, zero elsewhere)
     * and spreads it {@code stride} apart along the others (position {@code y} holds
     * {@code data[(y - before) / stride]} when {@code y - before} is a non-negative multiple of the
     * stride below {@code (in - 1) * stride + 1}, zero elsewhere). The stage is called "pad" when
     * every axis is a phase axis, "dilate_pad" otherwise, and left out when it would be the identity.
     */
    private static Tensor sourceStage(Tensor data, ConvLayout l, Axis[] ax) {
        int s = l.spatialRank();
        long[] shape = data.shape().toArray();
        boolean identity = true;
        boolean allPhase = true;
        for (int i = 0; i < s; i++) {
            shape[l.dataSpatial[i]] = ax[i].size();
            identity &= ax[i].identity();
            allPhase &= ax[i].phase();
        }
        if (identity) return data;
        String name = allPhase ? "pad" : "dilate_pad";
        Expr zero = Literals.of(data.dtype(), 0L);
        return Te.computeN(name, name, Shape.of(shape), idx -> {
            List<Expr> src = new ArrayList<>(idx);
            Expr cond = null;
            for (int i = 0; i < s; i++) {
                Axis a = ax[i];
                int d = l.dataSpatial[i];
                long stride = a.phase() ? 1 : a.stride();
                long last = (a.in() - 1) * stride; // last non-zero position of the (dilated) input
                Expr pos = a.before() == 0 ? idx.get(d) : idx.get(d).sub(a.before());
                if (a.before() > 0) cond = and(cond, pos.ge(0));
                if (shape[d] - 1 - a.before() > last) cond = and(cond, pos.le(last));
                if (stride != 1) {
                    cond = and(cond, pos.floormod(stride).eq(0));
                    pos = pos.floordiv(stride);
                }
                src.set(d, pos);
            }
            Expr read = data.at(src);
            return cond == null ? read : select(cond, read, zero);
        });
    }

    private static Expr and(Expr a, Expr b) {
        return a == null ? b : a.and(b);
    }
}
