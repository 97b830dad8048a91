package dev.kiln.nn;

import static dev.kiln.te.Te.sum;

import dev.kiln.ir.Expr;
import dev.kiln.ir.IterVar;
import dev.kiln.ir.KilnException;
import dev.kiln.ir.Literals;
import dev.kiln.te.Shape;
import dev.kiln.te.Te;
import dev.kiln.te.Tensor;
import java.util.List;

/**
 * The capsule convolution of the Ansor evaluation (TVM's {@code conv2d_capsule_nhwijc}): every
 * pixel holds a CAP x CAP pose matrix per channel, and the convolution multiplies pose matrices:
 *
 * <pre>
 * out[n, oh, ow, i, j, co] = sum over rh, rw, k, rc of
 *     pad(data)[n, oh * stride + rh * dilation, ow * stride + rw * dilation, i, k, rc]
 *   * weight[rh, rw, k, j, rc, co]
 * </pre>
 *
 * with data [N, H, W, CAP, CAP, CI], weight [KH, KW, CAP, CAP, CI, CO], output [N, OH, OW, CAP, CAP, CO].
 */
public final class CapsuleConv {
    private CapsuleConv() {}

    private static final String NAME = "conv2d_capsule_nhwijc";

    /** Capsule conv2d with the given stride and symmetric padding on H and W. */
    @Operator("Capsule conv2d (Ansor's CAP): a CAP x CAP pose matrix per pixel and channel, times the weight's.")
    public static Tensor conv2dCapsuleNhwijc(Tensor data, Tensor weight, long stride, long pad) {
        return conv2dCapsuleNhwijc(data, weight, ConvParams.of(2, stride, pad));
    }

    /** Capsule conv2d; {@code p} gives stride, padding and dilation on (H, W); groups must be 1. */
    public static Tensor conv2dCapsuleNhwijc(Tensor data, Tensor weight, ConvParams p) {
        ConvChecks.requireRank(NAME, "input", data, "NHWIJC");
        ConvChecks.requireRank(NAME, "weight", weight, "HWKJCO");
        ConvChecks.requireSameDType(NAME, data, weight);
        ConvChecks.checkWindow(NAME, p, new String[] {"H", "W"});
        if (p.groups() != 1) throw new KilnException(NAME + ": groups must be 1, got " + p.groups());
        long cap = data.dim(3);
        if (data.dim(4) != cap) {
            throw new KilnException(NAME + ": the capsule axes of input '" + data.name()
                    + "' (axes 3 and 4) must be equal, got " + data.shape());
        }
        if (weight.dim(2) != cap || weight.dim(3) != cap) {
            throw new KilnException(NAME + ": weight '" + weight.name() + "' axes 2 and 3 (capsule) must be " + cap
                    + " as input '" + data.name() + "' axes 3 and 4, got " + weight.shape());
        }
        long ci = data.dim(5);
        if (weight.dim(4) != ci) {
            throw new KilnException(NAME + ": input '" + data.name() + "' axis 5 (C) has " + ci
                    + " channels but weight '" + weight.name() + "' axis 4 (I) has " + weight.dim(4));
        }
        long kh = weight.dim(0);
        long kw = weight.dim(1);
        long oh =
                ConvOutput.size(NAME, "H", data.dim(1), kh, p.stride(0), p.padBefore(0), p.padAfter(0), p.dilation(0));
        long ow =
                ConvOutput.size(NAME, "W", data.dim(2), kw, p.stride(1), p.padBefore(1), p.padAfter(1), p.dilation(1));
        long[][] pads = ConvChecks.padArrays(6, new int[] {1, 2}, p);
        Tensor padded = Pad.padIfNeeded(data, pads[0], pads[1], Literals.of(data.dtype(), 0L));
        IterVar rh = Te.reduceAxis(kh, "rh");
        IterVar rw = Te.reduceAxis(kw, "rw");
        IterVar rk = Te.reduceAxis(cap, "rk");
        IterVar rc = Te.reduceAxis(ci, "rc");
        Shape out = Shape.of(data.dim(0), oh, ow, cap, cap, weight.dim(5));
        return Te.computeN(NAME, NAME, out, a -> {
            Expr h = ConvChecks.window(a.get(1), p.stride(0), rh, p.dilation(0));
            Expr w = ConvChecks.window(a.get(2), p.stride(1), rw, p.dilation(1));
            Expr x = padded.at(a.get(0), h, w, a.get(3), rk, rc);
            Expr k = weight.at(rh, rw, rk, a.get(4), rc, a.get(5));
            return sum(List.of(rh, rw, rk, rc), x.mul(k));
        });
    }
}
