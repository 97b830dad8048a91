package dev.kiln.graph;

import static dev.kiln.graph.OpPattern.BROADCAST;
import static dev.kiln.graph.OpPattern.ELEMWISE;

import dev.kiln.nn.Activation;
import dev.kiln.nn.Elementwise;
import dev.kiln.nn.Logic;
import dev.kiln.nn.Norm;
import dev.kiln.nn.Operator;
import dev.kiln.te.Tensor;
import java.util.List;

/**
 * The elementwise and broadcast operators of the graph: batch norm, bias add, the binary and unary
 * operators and clip.
 *
 * <p>A family of {@link Op}'s records: {@code Op} extends this interface, so its records are named
 * {@code Op.Binary}, {@code Op.BiasAdd}, ... as if they were declared in it (member types are inherited). Sealed,
 * with {@code Op} its only subtype: it has no members but the records, and nothing else implements it.
 */
public sealed interface ElementwiseOps permits Op {
    /**
     * Batch norm for inference: inputs x, mean, var, gamma, beta, channels on {@code axis}.
     * {@code GraphPasses} folds it into a preceding conv or dense, or turns it into a multiply and an add.
     */
    @Operator("Batch norm for inference: inputs x, mean, var, gamma, beta (folded away by the graph passes).")
    @OpSpec(kind = "batch_norm", arity = 5, pattern = BROADCAST)
    record BatchNorm(int axis, double epsilon) implements Op {
        public Tensor build(List<Tensor> in) {
            return Norm.batchNorm(in.get(0), axis, in.get(1), in.get(2), in.get(3), in.get(4), epsilon);
        }

        public String attrs() {
            return "axis=" + axis + " eps=" + epsilon;
        }
    }

    /** {@code x + bias[c]} with the rank-1 bias along {@code axis}. */
    @Operator("`x + bias[c]` with the rank-1 bias along `axis`.")
    @OpSpec(kind = "bias_add", arity = 2, pattern = BROADCAST)
    record BiasAdd(int axis) implements Op {
        public Tensor build(List<Tensor> in) {
            return Elementwise.biasAdd(in.get(0), in.get(1), axis);
        }

        public String attrs() {
            return "axis=" + axis;
        }
    }

    /** A binary elementwise op with numpy broadcasting. */
    @Operator("A binary elementwise op with numpy broadcasting; comparisons and logical ones give bool.")
    @OpSpec(arity = 2, pattern = BROADCAST)
    record Binary(Op.BinaryKind op) implements Op {
        public String kind() {
            return op.name().toLowerCase(java.util.Locale.ROOT);
        }

        public Tensor build(List<Tensor> in) {
            Tensor a = in.get(0), b = in.get(1);
            return switch (op) {
                case ADD -> Elementwise.add(a, b);
                case SUBTRACT -> Elementwise.subtract(a, b);
                case MULTIPLY -> Elementwise.multiply(a, b);
                case DIVIDE -> Elementwise.divide(a, b);
                case MAXIMUM -> Elementwise.maximum(a, b);
                case MINIMUM -> Elementwise.minimum(a, b);
                case POWER -> Elementwise.power(a, b);
                case EQUAL -> Logic.equal(a, b);
                case LESS -> Logic.less(a, b);
                case LESS_EQUAL -> Logic.lessEqual(a, b);
                case GREATER -> Logic.greater(a, b);
                case GREATER_EQUAL -> Logic.greaterEqual(a, b);
                case AND -> Logic.and(a, b);
                case OR -> Logic.or(a, b);
                case XOR -> Logic.xor(a, b);
            };
        }
    }

    /** A unary elementwise activation. */
    @Operator("A unary elementwise activation (relu, sigmoid, tanh, gelu, ...) or logical not.")
    @OpSpec(arity = 1, pattern = ELEMWISE)
    record Unary(Op.UnaryKind op) implements Op {
        public String kind() {
            return op.name().toLowerCase(java.util.Locale.ROOT);
        }

        public Tensor build(List<Tensor> in) {
            Tensor x = in.get(0);
            return switch (op) {
                case RELU -> Activation.relu(x);
                case SIGMOID -> Activation.sigmoid(x);
                case TANH -> Activation.tanh(x);
                case GELU -> Activation.gelu(x, false);
                case GELU_TANH -> Activation.gelu(x, true);
                case ERF -> Activation.erf(x);
                case SQRT -> Activation.sqrt(x);
                case NOT -> Logic.not(x);
            };
        }
    }

    /** {@code min(max(x, lo), hi)} (ReLU6 is clip(0, 6)). */
    @Operator("`min(max(x, lo), hi)` (ReLU6 is clip(0, 6)).")
    @OpSpec(kind = "clip", arity = 1, pattern = ELEMWISE)
    record Clip(double lo, double hi) implements Op {
        public Tensor build(List<Tensor> in) {
            return Activation.clip(in.get(0), lo, hi);
        }

        public String attrs() {
            return "[" + lo + ", " + hi + "]";
        }
    }
}
