package dev.kiln.graph;

import static dev.kiln.graph.OpPattern.BROADCAST;
import static dev.kiln.graph.OpPattern.COMM_REDUCE;
import static dev.kiln.graph.OpPattern.ELEMWISE;
import static dev.kiln.graph.OpPattern.OUT_EWISE_FUSABLE;

import dev.kiln.ir.DType;
import dev.kiln.ir.KilnException;
import dev.kiln.nn.LowPrecision;
import dev.kiln.nn.Operator;
import dev.kiln.nn.Pad;
import dev.kiln.nn.Quant;
import dev.kiln.te.Tensor;
import java.util.List;

/**
 * The integer operators of the graph: cast, quantize, dynamic_qparams, dequantize, requantize, dense_integer (8-bit
 * data accumulating in int32), and matmul_packed and conv2d_packed (the dot-product instructions' matmul and conv).
 *
 * <p>A family of {@link Op}'s records: {@code Op} extends this interface, so its records are named
 * {@code Op.Quantize}, {@code Op.Cast}, ... as if they were declared in it (member types are inherited). Sealed,
 * with {@code Op} its only subtype: it has no members but the records, and nothing else implements it.
 */
public sealed interface IntegerOps permits Op {
    /** Elementwise type conversion to {@code to} (see {@code Quant.cast}). */
    @Operator("Elementwise type conversion to `to`.")
    @OpSpec(kind = "cast", arity = 1, pattern = ELEMWISE)
    record Cast(DType to) implements Op {
        public Tensor build(List<Tensor> in) {
            return Quant.cast(in.get(0), to);
        }

        public String attrs() {
            return "to=" + to;
        }
    }

    /** Inputs x (float32), scale, zero point (its dtype is the output's): round half to even, saturate. */
    @Operator("x (float32) / scale + zero point, rounded half to even and saturated to the zero point's type.")
    @OpSpec(kind = "quantize", arity = 3, pattern = BROADCAST)
    record Quantize() implements Op {
        public Tensor build(List<Tensor> in) {
            return Quant.quantize(in.get(0), in.get(1), in.get(2));
        }
    }

    /**
     * float32 [scale, zero point] of DynamicQuantizeLinear from x's range (see {@code Quant.dynamicQuantParams}):
     * the reduction over all of x that a {@link Quantize} of x to uint8 reads its parameters from.
     */
    @Operator("DynamicQuantizeLinear's float32 `[scale, zero point]` for uint8 from x's range widened to hold 0.")
    @OpSpec(kind = "dynamic_qparams", arity = 1, pattern = COMM_REDUCE)
    record DynamicQuantParams() implements Op {
        public Tensor build(List<Tensor> in) {
            return Quant.dynamicQuantParams(in.get(0));
        }
    }

    /** Inputs x (integer), scale, zero point: {@code (x - zero) * scale} in float32. */
    @Operator("`(x - zero) * scale` in float32 for integer x.")
    @OpSpec(kind = "dequantize", arity = 3, pattern = BROADCAST)
    record Dequantize() implements Op {
        public Tensor build(List<Tensor> in) {
            return Quant.dequantize(in.get(0), in.get(1), in.get(2));
        }
    }

    /** Inputs acc (int32), multiplier (float32), zero point: an int32 accumulator back to 8 bits. */
    @Operator("An int32 accumulator times a float32 multiplier plus a zero point, back to 8 bits.")
    @OpSpec(kind = "requantize", arity = 3, pattern = BROADCAST)
    record Requantize() implements Op {
        public Tensor build(List<Tensor> in) {
            return Quant.requantize(in.get(0), in.get(1), in.get(2));
        }
    }

    /** Dense on 8-bit data accumulating in int32: inputs x [N, K], w [units, K], x zero point, w zero point. */
    @Operator("Dense on 8-bit data accumulating in int32, with zero points for x and w.")
    @OpSpec(kind = "dense_integer", arity = 4, pattern = OUT_EWISE_FUSABLE, weightInputs = 1)
    record DenseInteger() implements Op {
        public Tensor build(List<Tensor> in) {
            return Quant.denseInteger(in.get(0), in.get(1), in.get(2), in.get(3));
        }
    }

    /**
     * {@code x [M, K]} (uint8 or int8) times an int8 weight packed to {@code [N/16, Kp/4, 16, 4]}
     * ({@code LowPrecision.packMatmulWeight}'s layout, {@code Kp} K rounded up to a multiple of 4, the extra rows
     * zero), accumulating in int32: x's columns padded with zeros up to {@code Kp}, then
     * {@code LowPrecision.matmulPacked}, the computation the tensorize rule puts on VNNI's {@code vpdpbusd}. The
     * weight is already in the instruction's layout, so it is not a layout-rewritable weight input.
     */
    @Operator("uint8/int8 x int8 matmul `[M, K] x packed [N/16, K/4, 16, 4]` for the dot-product instructions.")
    @OpSpec(kind = "matmul_packed", arity = 2, pattern = OUT_EWISE_FUSABLE)
    record MatmulPacked() implements Op {
        public Tensor build(List<Tensor> in) {
            Tensor x = in.get(0), w = in.get(1);
            if (x.rank() != 2 || w.rank() != 4)
                throw new KilnException("matmul_packed: needs x [M, K] and a packed weight [N/16, K/4, 16, 4], got "
                        + x.name() + " " + x.shape() + " and " + w.name() + " " + w.shape());
            long extra = w.dim(1) * w.dim(3) - x.dim(1);
            if (extra < 0)
                throw new KilnException("matmul_packed: input " + x.name() + " has " + x.dim(1)
                        + " columns, more than the packed weight's " + (x.dim(1) + extra));
            if (extra > 0) x = Pad.pad(x, new long[] {0, 0}, new long[] {0, extra});
            return LowPrecision.matmulPacked(x, w);
        }
    }

    /**
     * A 2-D NHWC convolution of uint8 or int8 x [N, H, W, C] with an int8 weight packed to
     * {@code [CO/16, KH, KW, C/4, 16, 4]} ({@code LowPrecision.packConv2dWeight}'s layout), accumulating in int32:
     * x padded with {@code padValue} (pads top, left, bottom, right; and its channels up to the weight's, whose extra
     * input channels hold zeros), then {@code LowPrecision.conv2dPacked} with
     * {@code stride} on both axes, the computation the tensorize rule puts on VNNI's {@code vpdpbusd}. The weight is
     * already in the instruction's layout, so it is not a layout-rewritable weight input.
     */
    @Operator(
            "uint8/int8 x int8 NHWC conv2d on a weight packed for the dot-product instructions, x padded with a value.")
    @OpSpec(kind = "conv2d_packed", arity = 2, pattern = OUT_EWISE_FUSABLE)
    record Conv2dPacked(long stride, List<Long> pads, long padValue) implements Op {
        public Conv2dPacked {
            pads = List.copyOf(pads);
            if (stride < 1) throw new KilnException("conv2d_packed: stride must be at least 1, got " + stride);
            if (pads.size() != 4 || pads.stream().anyMatch(v -> v < 0))
                throw new KilnException("conv2d_packed: needs 4 pads >= 0 (top, left, bottom, right), got " + pads);
        }

        public Tensor build(List<Tensor> in) {
            Tensor x = in.get(0);
            // channels up to the packed weight's (a multiple of the dot product's group), whose extra rows are 0
            long extra = in.get(1).dim(3) * in.get(1).dim(5) - x.dim(3);
            if (extra < 0)
                throw new KilnException("conv2d_packed: input " + x.name() + " has " + x.dim(3)
                        + " channels, more than the packed weight's " + (x.dim(3) + extra));
            if (extra > 0 || pads.stream().anyMatch(v -> v > 0)) {
                x = Pad.pad(
                        x,
                        new long[] {0, pads.get(0), pads.get(1), 0},
                        new long[] {0, pads.get(2), pads.get(3), extra},
                        (double) padValue);
            }
            return LowPrecision.conv2dPacked(x, in.get(1), Math.toIntExact(stride));
        }

        public String attrs() {
            return "stride=" + stride + " pads=" + pads + (padValue == 0 ? "" : " pad_value=" + padValue);
        }
    }
}
