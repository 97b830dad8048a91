package dev.kiln.onnx;

import dev.kiln.ir.KilnException;
import dev.kiln.onnx.proto.Onnx.NodeProto;
import java.util.Set;
import java.util.TreeSet;

/** Dispatches an ONNX node to its converter; the list of supported operators lives here. */
final class OnnxOps {
    private OnnxOps() {}

    /** Every operator type the importer reads. */
    static final Set<String> SUPPORTED = new TreeSet<>(Set.of(
            "Conv",
            "MaxPool",
            "AveragePool",
            "GlobalAveragePool",
            "GlobalMaxPool",
            "BatchNormalization",
            "Gemm",
            "MatMul",
            "Softmax",
            "ReduceMean",
            "LayerNormalization",
            "Relu",
            "Sigmoid",
            "Tanh",
            "Erf",
            "Sqrt",
            "Gelu",
            "Clip",
            "Add",
            "Sub",
            "Mul",
            "Div",
            "Pow",
            "Max",
            "Min",
            "Reshape",
            "Flatten",
            "Transpose",
            "Concat",
            "Split",
            "Slice",
            "Gather",
            "Unsqueeze",
            "Squeeze",
            "Shape",
            "Constant",
            "ConstantOfShape",
            "Cast",
            "Identity",
            "Dropout",
            "QuantizeLinear",
            "DequantizeLinear",
            "DynamicQuantizeLinear",
            "QLinearMatMul",
            "MatMulInteger",
            "QLinearConv",
            "ConvInteger",
            "Range",
            "Expand",
            "Where",
            "ConvTranspose",
            "Equal",
            "Less",
            "LessOrEqual",
            "Greater",
            "GreaterOrEqual",
            "And",
            "Or",
            "Xor",
            "Not"));

    static void convert(ImportContext ctx, NodeProto n) {
        switch (n.getOpType()) {
            case "Conv" -> NnOps.conv(ctx, n);
            case "MaxPool", "AveragePool" -> PoolOps.pool(ctx, n);
            case "GlobalAveragePool", "GlobalMaxPool" -> PoolOps.global(ctx, n);
            case "BatchNormalization" -> NnOps.batchNorm(ctx, n);
            case "Gemm" -> MatmulOps.gemm(ctx, n);
            case "MatMul" -> MatmulOps.matmul(ctx, n);
            case "Softmax" -> NnOps.softmax(ctx, n);
            case "ReduceMean" -> NnOps.reduceMean(ctx, n);
            case "LayerNormalization" -> NnOps.layerNorm(ctx, n);
            case "Relu", "Sigmoid", "Tanh", "Erf", "Sqrt", "Gelu", "Not" -> MathOps.unary(ctx, n);
            case "Clip" -> MathOps.clip(ctx, n);
            case "Add", "Sub", "Mul", "Div", "Pow", "Max", "Min" -> MathOps.binary(ctx, n);
            case "Equal", "Less", "LessOrEqual", "Greater", "GreaterOrEqual", "And", "Or", "Xor" ->
                MathOps.binary(ctx, n);
            case "Reshape", "Flatten", "Unsqueeze", "Squeeze" -> ShapeOps.reshape(ctx, n);
            case "Transpose" -> ShapeOps.transpose(ctx, n);
            case "Concat" -> ShapeOps.concat(ctx, n);
            case "Split" -> ShapeOps.split(ctx, n);
            case "Slice" -> ShapeOps.slice(ctx, n);
            case "Gather" -> ShapeOps.gather(ctx, n);
            case "Shape" -> ShapeOps.shape(ctx, n);
            case "Constant" -> ShapeOps.constant(ctx, n);
            case "ConstantOfShape" -> ShapeOps.constantOfShape(ctx, n);
            case "Cast" -> ShapeOps.cast(ctx, n);
            case "Identity", "Dropout" -> ShapeOps.identity(ctx, n);
            case "QuantizeLinear" -> QuantOps.quantizeLinear(ctx, n);
            case "DequantizeLinear" -> QuantOps.dequantizeLinear(ctx, n);
            case "DynamicQuantizeLinear" -> QuantOps.dynamicQuantizeLinear(ctx, n);
            case "QLinearMatMul" -> QuantMatmulOps.qlinearMatmul(ctx, n);
            case "MatMulInteger" -> QuantMatmulOps.matmulInteger(ctx, n);
            case "QLinearConv" -> QuantOps.qlinearConv(ctx, n);
            case "ConvInteger" -> QuantOps.convInteger(ctx, n);
            case "Range" -> IndexOps.range(ctx, n);
            case "Expand" -> IndexOps.expand(ctx, n);
            case "Where" -> IndexOps.where(ctx, n);
            case "ConvTranspose" -> ConvOps.convTranspose(ctx, n);
            default ->
                throw new KilnException("operator '" + n.getOpType() + "' is not supported; Kiln imports " + SUPPORTED);
        }
    }

    /**
     * Checks that the node has at most {@code max} outputs in use (trailing optional outputs may be named but empty).
     */
    static void outputsAtMost(NodeProto n, int max, String what) {
        for (int i = max; i < n.getOutputCount(); i++) {
            if (!n.getOutput(i).isEmpty())
                throw new KilnException("output " + i + " ('" + n.getOutput(i) + "') is not supported: " + what);
        }
    }
}
