package dev.kiln.nn;

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
 * Convolutions (cross-correlation, as in every deep-learning framework) with stride, per-side
 * padding, dilation and groups:
 *
 * <pre>
 * out[n, co, o...] = sum over rc, r... of  pad(data)[n, g * CI/groups + rc, o * stride + r * dilation]
 *                                          * weight[co, rc, r...]        (g = co / (CO/groups))
 * </pre>
 *
 * <p>Layouts: {@link #conv1dNlc} (data NLC, weight [K, CI/groups, CO]), {@link #conv2dNhwc} (NHWC,
 * weight HWIO = [KH, KW, CI/groups, CO]), {@link #conv2dNchw} (NCHW, weight OIHW = [CO, CI/groups,
 * KH, KW]), {@link #conv3dNdhwc} (NDHWC, weight DHWIO); {@link #conv} takes any pair of layout
 * strings. The output has the layout of the data. Depthwise convolutions are
 * {@link #depthwiseConv2dNhwc} and {@link #depthwiseConv2dNchw}. Padding, when non-zero, is a
 * separate stage named "pad" ({@link Pad}); the convolution is named and tagged after the
 * operator ("conv2d_nhwc").
 */
public final class Conv {
    private Conv() {}

    // ---- conv1d / conv2d / conv3d ------------------------------------------------------------

    /** conv1d, data [N, L, CI], weight [K, CI/groups, CO], output [N, OL, CO]. */
    @Operator("conv1d, data [N, L, CI], weight [K, CI/groups, CO], output [N, OL, CO].")
    public static Tensor conv1dNlc(Tensor data, Tensor weight, ConvParams p) {
        return conv("conv1d_nlc", data, weight, "NLC", "LIO", p);
    }

    /** conv1d NLC with the given stride and symmetric padding. */
    public static Tensor conv1dNlc(Tensor data, Tensor weight, long stride, long pad) {
        return conv1dNlc(data, weight, ConvParams.of(1, stride, pad));
    }

    /** conv2d, data [N, H, W, CI], weight [KH, KW, CI/groups, CO] (HWIO), output [N, OH, OW, CO]. */
    @Operator("conv2d, data [N, H, W, CI], weight [KH, KW, CI/groups, CO] (HWIO), output [N, OH, OW, CO].")
    public static Tensor conv2dNhwc(Tensor data, Tensor weight, ConvParams p) {
        return conv("conv2d_nhwc", data, weight, "NHWC", "HWIO", p);
    }

    /** conv2d NHWC with the given stride and symmetric padding. */
    public static Tensor conv2dNhwc(Tensor data, Tensor weight, long stride, long pad) {
        return conv2dNhwc(data, weight, ConvParams.of(2, stride, pad));
    }

    /** conv2d, data [N, CI, H, W], weight [CO, CI/groups, KH, KW] (OIHW), output [N, CO, OH, OW]. */
    @Operator("conv2d, data [N, CI, H, W], weight [CO, CI/groups, KH, KW] (OIHW), output [N, CO, OH, OW].")
    public static Tensor conv2dNchw(Tensor data, Tensor weight, ConvParams p) {
        return conv("conv2d_nchw", data, weight, "NCHW", "OIHW", p);
    }

    /** conv2d NCHW with the given stride and symmetric padding. */
    public static Tensor conv2dNchw(Tensor data, Tensor weight, long stride, long pad) {
        return conv2dNchw(data, weight, ConvParams.of(2, stride, pad));
    }

    /** conv3d, data [N, D, H, W, CI], weight [KD, KH, KW, CI/groups, CO] (DHWIO), output [N, OD, OH, OW, CO]. */
    @Operator("conv3d, data [N, D, H, W, CI], weight [KD, KH, KW, CI/groups, CO], output [N, OD, OH, OW, CO].")
    public static Tensor conv3dNdhwc(Tensor data, Tensor weight, ConvParams p) {
        return conv("conv3d_ndhwc", data, weight, "NDHWC", "DHWIO", p);
    }

    /** conv3d NDHWC with the given stride and symmetric padding. */
    public static Tensor conv3dNdhwc(Tensor data, Tensor weight, long stride, long pad) {
        return conv3dNdhwc(data, weight, ConvParams.of(3, stride, pad));
    }

    /**
     * A convolution in any layout. {@code dataLayout} names the data axes (one N, one C, the
     * spatial letters, e.g. "NCDHW"); {@code kernelLayout} names the weight axes (one O, one I of
     * extent CI/groups, the same spatial letters, e.g. "OIDHW"). The output has the data layout
     * with C = CO, and is named and tagged {@code name}.
     */
    @Operator("A convolution in any layout, with stride, padding, dilation and groups.")
    public static Tensor conv(
            String name, Tensor data, Tensor weight, String dataLayout, String kernelLayout, ConvParams p) {
        ConvLayout l = ConvLayout.parse(name, dataLayout, kernelLayout);
        l.requireRanks(data, weight);
        ConvChecks.requireSameDType(name, data, weight);
        ConvChecks.checkWindow(name, p, l.spatialNames());
        long groups = p.groups();
        long ci = data.dim(l.channel);
        long co = weight.dim(l.kernelOut);
        long wi = weight.dim(l.kernelIn);
        if (ci % groups != 0) {
            throw new KilnException(name + ": groups " + groups + " does not divide the " + ci + " input channels of "
                    + ConvChecks.axis("input", data, l.channel, dataLayout));
        }
        if (co % groups != 0) {
            throw new KilnException(name + ": groups " + groups + " does not divide the " + co + " output channels of "
                    + ConvChecks.axis("weight", weight, l.kernelOut, kernelLayout));
        }
        if (wi * groups != ci) {
            throw new KilnException(name + ": " + ConvChecks.axis("input", data, l.channel, dataLayout) + " has " + ci
                    + " channels but " + ConvChecks.axis("weight", weight, l.kernelIn, kernelLayout) + " has " + wi
                    + "; with groups " + groups + " it must be " + ci + " / " + groups + " = " + (ci / groups));
        }
        int s = l.spatialRank();
        long[] out = new long[data.rank()];
        out[l.batch] = data.dim(l.batch);
        out[l.channel] = co;
        long[] kernel = new long[s];
        for (int i = 0; i < s; i++) {
            kernel[i] = weight.dim(l.kernelSpatial[i]);
            out[l.dataSpatial[i]] = ConvOutput.size(
                    name,
                    l.spatialName(i),
                    data.dim(l.dataSpatial[i]),
                    kernel[i],
                    p.stride(i),
                    p.padBefore(i),
                    p.padAfter(i),
                    p.dilation(i));
        }
        long[][] pads = ConvChecks.padArrays(data.rank(), l.dataSpatial, p);
        Tensor padded = Pad.padIfNeeded(data, pads[0], pads[1], Literals.of(data.dtype(), 0L));

        // reduce axes in the order of the kernel layout: rc and one per spatial letter
        IterVar rc = Te.reduceAxis(wi, "rc");
        IterVar[] r = new IterVar[s];
        for (int i = 0; i < s; i++)
            r[i] = Te.reduceAxis(kernel[i], "r" + l.spatialName(i).toLowerCase());
        List<IterVar> axes = new ArrayList<>();
        for (int k = 0; k < kernelLayout.length(); k++) {
            if (k == l.kernelIn) axes.add(rc);
            for (int i = 0; i < s; i++) if (l.kernelSpatial[i] == k) axes.add(r[i]);
        }
        long coPerGroup = co / groups;
        return Te.computeN(name, name, Shape.of(out), idx -> {
            Expr[] di = new Expr[data.rank()];
            Expr[] wIdx = new Expr[weight.rank()];
            Expr oc = idx.get(l.channel);
            di[l.batch] = idx.get(l.batch);
            di[l.channel] = groups == 1 ? rc : oc.floordiv(coPerGroup).mul(wi).add(rc);
            wIdx[l.kernelOut] = oc;
            wIdx[l.kernelIn] = rc;
            for (int i = 0; i < s; i++) {
                di[l.dataSpatial[i]] = ConvChecks.window(idx.get(l.dataSpatial[i]), p.stride(i), r[i], p.dilation(i));
                wIdx[l.kernelSpatial[i]] = r[i];
            }
            return sum(axes, padded.at(Arrays.asList(di)).mul(weight.at(Arrays.asList(wIdx))));
        });
    }

    // ---- depthwise -----------------------------------------------------------------------------

    /**
     * Depthwise conv2d, data [N, H, W, C], weight [KH, KW, C, M] (M = channel multiplier), output
     * [N, OH, OW, C * M] with {@code out[n, h, w, c * M + m] = sum pad(data)[n, ., ., c] * weight[., ., c, m]}
     * (PyTorch's conv2d with groups = C). {@code p.groups()} must be 1.
     */
    @Operator("Depthwise conv2d, data [N, H, W, C], weight [KH, KW, C, M], output [N, OH, OW, C * M].")
    public static Tensor depthwiseConv2dNhwc(Tensor data, Tensor weight, ConvParams p) {
        return depthwise("depthwise_conv2d_nhwc", data, weight, "NHWC", "HWCM", p);
    }

    /** Depthwise conv2d NHWC with the given stride and symmetric padding. */
    public static Tensor depthwiseConv2dNhwc(Tensor data, Tensor weight, long stride, long pad) {
        return depthwiseConv2dNhwc(data, weight, ConvParams.of(2, stride, pad));
    }

    /**
     * Depthwise conv2d, data [N, C, H, W], weight [C, M, KH, KW], output [N, C * M, OH, OW] with
     * output channel {@code c * M + m} reading input channel {@code c}. {@code p.groups()} must be 1.
     */
    @Operator("Depthwise conv2d, data [N, C, H, W], weight [C, M, KH, KW], output [N, C * M, OH, OW].")
    public static Tensor depthwiseConv2dNchw(Tensor data, Tensor weight, ConvParams p) {
        return depthwise("depthwise_conv2d_nchw", data, weight, "NCHW", "CMHW", p);
    }

    /** Depthwise conv2d NCHW with the given stride and symmetric padding. */
    public static Tensor depthwiseConv2dNchw(Tensor data, Tensor weight, long stride, long pad) {
        return depthwiseConv2dNchw(data, weight, ConvParams.of(2, stride, pad));
    }

    private static Tensor depthwise(
            String name, Tensor data, Tensor weight, String dataLayout, String kernelLayout, ConvParams p) {
        ConvChecks.requireRank(name, "input", data, dataLayout);
        ConvChecks.requireRank(name, "weight", weight, kernelLayout);
        ConvChecks.requireSameDType(name, data, weight);
        int dc = dataLayout.indexOf('C');
        int[] ds = {dataLayout.indexOf('H'), dataLayout.indexOf('W')};
        int wc = kernelLayout.indexOf('C');
        int wm = kernelLayout.indexOf('M');
        int[] ws = {kernelLayout.indexOf('H'), kernelLayout.indexOf('W')};
        ConvChecks.checkWindow(name, p, new String[] {"H", "W"});
        if (p.groups() != 1) {
            throw new KilnException(
                    name + ": a depthwise convolution has one group per channel; leave groups at 1, got " + p.groups());
        }
        long c = data.dim(dc);
        if (weight.dim(wc) != c) {
            throw new KilnException(
                    name + ": " + ConvChecks.axis("input", data, dc, dataLayout) + " has " + c + " channels but "
                            + ConvChecks.axis("weight", weight, wc, kernelLayout) + " has " + weight.dim(wc));
        }
        long m = weight.dim(wm);
        long[] out = new long[4];
        out[dataLayout.indexOf('N')] = data.dim(dataLayout.indexOf('N'));
        out[dc] = c * m;
        String[] names = {"H", "W"};
        for (int i = 0; i < 2; i++) {
            out[ds[i]] = ConvOutput.size(
                    name,
                    names[i],
                    data.dim(ds[i]),
                    weight.dim(ws[i]),
                    p.stride(i),
                    p.padBefore(i),
                    p.padAfter(i),
                    p.dilation(i));
        }
        long[][] pads = ConvChecks.padArrays(4, ds, p);
        Tensor padded = Pad.padIfNeeded(data, pads[0], pads[1], Literals.of(data.dtype(), 0L));
        IterVar rh = Te.reduceAxis(weight.dim(ws[0]), "rh");
        IterVar rw = Te.reduceAxis(weight.dim(ws[1]), "rw");
        IterVar[] r = {rh, rw};
        return Te.computeN(name, name, Shape.of(out), idx -> {
            Expr[] di = new Expr[4];
            Expr[] wIdx = new Expr[4];
            Expr oc = idx.get(dc);
            Expr ic = m == 1 ? oc : oc.floordiv(m);
            int nAxis = dataLayout.indexOf('N');
            di[nAxis] = idx.get(nAxis);
            di[dc] = ic;
            wIdx[wc] = ic;
            wIdx[wm] = m == 1 ? Literals.of(oc.dtype(), 0L) : oc.floormod(m);
            for (int i = 0; i < 2; i++) {
                di[ds[i]] = ConvChecks.window(idx.get(ds[i]), p.stride(i), r[i], p.dilation(i));
                wIdx[ws[i]] = r[i];
            }
            return sum(List.of(rh, rw), padded.at(Arrays.asList(di)).mul(weight.at(Arrays.asList(wIdx))));
        });
    }
}
