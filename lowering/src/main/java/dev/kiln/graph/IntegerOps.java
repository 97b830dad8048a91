package dev.kiln.graph;

import static dev.kiln.graph.OpPattern.BROADCAST;
import static dev.kiln.graph.OpPattern.ELEMWISE;
import static dev.kiln.graph.OpPattern.OUT_EWISE_FUSABLE;

import dev.kiln.ir.DType;
import dev.kiln.nn.Operator;
import dev.kiln.nn.Quant;
import dev.kiln.te.Tensor;
import java.util.List;

/**
 * The integer operators of the graph: cast, quantize, dequantize, requantize and dense_integer (8-bit data
 * accumulating in int32).
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
}
