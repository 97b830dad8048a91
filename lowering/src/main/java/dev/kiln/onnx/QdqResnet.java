package dev.kiln.onnx;

import dev.kiln.ir.DType;
import dev.kiln.onnx.QdqWriter.Act;
import dev.kiln.onnx.QdqWriter.Q;

/**
 * A bottleneck ResNet in the QDQ form ONNX Runtime's {@code quantize_static} writes ({@link QdqWriter}): every Conv
 * reads DequantizeLinear'd input and weight and its output goes through a QuantizeLinear (a Relu after a Conv or the
 * residual Add dropped, its range given by the output's zero point at the type's minimum); the residual Add, the max
 * pool and the global average pool read DequantizeLinear'd 8-bit values and are quantised again; the classifier's
 * Gemm runs on the dequantised features with float weights. The last conv of each residual branch is scaled down by
 * 2.
 */
final class QdqResnet {
    private QdqResnet() {}

    static ModelWriter build(
            String name, int[] blocks, long base, long image, long classes, DType activations, long seed) {
        QdqWriter n = new QdqWriter(name, 17, activations, seed);
        n.m.input("data", "batch", 3L, image, image);
        Q x = n.quantize("data", "data", 1.0 / 3, Act.NONE); // uniform in [-1, 1]
        x = n.conv("stem", x, 3, base, 7, 2, 3, 1, 1.0, Act.RELU);
        Q pooled = n.newQ("stem.pool", x.s(), x.z(), x.m2()); // a max pool keeps its input's scale, as ONNX Runtime's
        x = n.requantize(OnnxZoo.stemPool(n.m, n.dequantize(x), "stem.pool_f"), pooled);
        long cin = base;
        for (int s = 0; s < blocks.length; s++) {
            long width = base << s, cout = width * 4;
            for (int b = 0; b < blocks[s]; b++) {
                String p = "layer" + (s + 1) + "." + b;
                long stride = b == 0 && s > 0 ? 2 : 1;
                String skipIn = n.dequantize(x);
                Q y = n.conv(p + ".conv1", x, cin, width, 1, 1, 0, 1, 1.0, Act.RELU);
                y = n.conv(p + ".conv2", y, width, width, 3, stride, 1, 1, 1.0, Act.RELU);
                y = n.conv(p + ".conv3", y, width, cout, 1, 1, 0, 1, 0.5, Act.NONE);
                Q skip = b == 0 ? n.conv(p + ".down", x, cin, cout, 1, stride, 0, 1, 1.0, Act.NONE) : x;
                String sum = n.m.node(
                        "Add", new String[] {n.dequantize(y), skip == x ? skipIn : n.dequantize(skip)}, p + ".add");
                x = n.quantize(sum, p + ".out", y.m2() + skip.m2(), Act.RELU); // the block's Relu, in the zero point
                cin = cout;
            }
        }
        return n.classifier(x, cin, classes, "fc");
    }
}
