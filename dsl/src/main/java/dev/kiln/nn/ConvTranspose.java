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
 * <p>Built as TVM builds it, in two stages: "dilate_pad" spreads the input {@code stride} apart
 * with zeros in between and pads it by {@code dilation * (K - 1) - padBefore} before (and what
 * the output needs after) using index arithmetic; then the operator correlates that with the
 * spatially flipped kernel. The first stage is left out when it would be the identity.
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
        Tensor dp = dilatePad(data, l, p, kernel, out);

        IterVar rc = Te.reduceAxis(ciPerGroup, "rc");
        IterVar[] r = new IterVar[s];
        for (int i = 0; i < s; i++)
            r[i] = Te.reduceAxis(kernel[i], "r" + l.spatialName(i).toLowerCase());
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
            for (int i = 0; i < s; i++) {
                di[l.dataSpatial[i]] = ConvChecks.window(idx.get(l.dataSpatial[i]), 1, r[i], p.dilation(i));
                // flipped kernel: K - 1 - r
                wIdx[l.kernelSpatial[i]] =
                        Literals.of(r[i].dtype(), kernel[i] - 1).sub(r[i]);
            }
            return sum(axes, dp.at(Arrays.asList(di)).mul(weight.at(Arrays.asList(wIdx))));
        });
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
     * The input spread {@code stride} apart and padded so that the output is a plain correlation
     * with the flipped kernel: along a spatial axis, position {@code y} holds
     * {@code data[(y - off) / stride]} when {@code y - off} is a non-negative multiple of the stride
     * below {@code (in - 1) * stride + 1}, and zero elsewhere; {@code off = dilation * (K - 1) - padBefore}.
     */
    private static Tensor dilatePad(Tensor data, ConvLayout l, ConvParams p, long[] kernel, long[] out) {
        int s = l.spatialRank();
        long[] shape = data.shape().toArray();
        long[] off = new long[s];
        boolean identity = true;
        for (int i = 0; i < s; i++) {
            int d = l.dataSpatial[i];
            shape[d] = out[d] + p.dilation(i) * (kernel[i] - 1);
            off[i] = p.dilation(i) * (kernel[i] - 1) - p.padBefore(i);
            identity &= p.stride(i) == 1 && off[i] == 0 && shape[d] == data.dim(d);
        }
        if (identity) return data;
        Expr zero = Literals.of(data.dtype(), 0L);
        return Te.computeN("dilate_pad", "dilate_pad", Shape.of(shape), idx -> {
            List<Expr> src = new ArrayList<>(idx);
            Expr cond = null;
            for (int i = 0; i < s; i++) {
                int d = l.dataSpatial[i];
                long stride = p.stride(i);
                long last = (data.dim(d) - 1) * stride; // last non-zero position of the dilated input
                Expr pos = off[i] == 0 ? idx.get(d) : idx.get(d).sub(off[i]);
                if (off[i] > 0) cond = and(cond, pos.ge(0));
                if (shape[d] - 1 - off[i] > last) cond = and(cond, pos.le(last));
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
