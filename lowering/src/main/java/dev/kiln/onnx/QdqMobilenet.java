package dev.kiln.onnx;

import dev.kiln.ir.DType;
import dev.kiln.ir.KilnException;
import dev.kiln.onnx.QdqWriter.Act;
import dev.kiln.onnx.QdqWriter.Q;

/**
 * MobileNet-V2 in the QDQ form ONNX Runtime's {@code quantize_static} writes ({@link QdqWriter}): batch norm folded,
 * every Conv (the stem, each block's 1x1 expansion, 3x3 depthwise and 1x1 projection, the last 1x1) between
 * DequantizeLinear'd input and per-channel int8 weights and a QuantizeLinear of its output, each Relu6 (Clip 0..6)
 * left out and given by the output's range ([0, min(6, 4 sigma)], zero point at the type's minimum); the residual
 * Add on dequantised values, quantised again; the global average pool the same; a float classifier. Each conv's
 * weights are scaled as its folded batch norm would scale them ({@link #bn}).
 */
final class QdqMobilenet {
    private QdqMobilenet() {}

    static ModelWriter build(
            String name, long image, double width, int stages, long classes, DType activations, long seed) {
        long[][] settings = OnnxZoo.MOBILENET_V2_STAGES;
        if (stages < 1 || stages > settings.length)
            throw new KilnException("MobileNet-V2 has 1 to 7 stages, asked for " + stages);
        QdqWriter n = new QdqWriter(name, 13, activations, seed);
        n.m.input("input", "batch", 3L, image, image);
        Q x = n.quantize("input", "input", 1.0 / 3, Act.NONE); // uniform in [-1, 1]
        long cin = OnnxZoo.ch(32, width);
        x = n.conv("features.0", x, 3, cin, 3, 2, 1, 1, bn(x, 1), Act.RELU6);
        for (int s = 0; s < stages; s++) {
            long t = settings[s][0], cout = OnnxZoo.ch(settings[s][1], width);
            for (int b = 0; b < settings[s][2]; b++) {
                String p = "features." + (s + 1) + "." + b;
                long stride = b == 0 ? settings[s][3] : 1, hidden = cin * t;
                boolean residual = stride == 1 && cin == cout;
                String skipIn = residual ? n.dequantize(x) : null;
                Q y = t == 1 ? x : n.conv(p + ".expand", x, cin, hidden, 1, 1, 0, 1, bn(x, 1), Act.RELU6);
                y = n.conv(p + ".dw", y, hidden, hidden, 3, stride, 1, hidden, bn(y, 1), Act.RELU6);
                y = n.conv(p + ".project", y, hidden, cout, 1, 1, 0, 1, bn(y, residual ? 0.25 : 1), Act.NONE);
                if (residual) {
                    String sum = n.m.node("Add", new String[] {skipIn, n.dequantize(y)}, p + ".add");
                    y = n.quantize(sum, p + ".out", x.m2() + y.m2(), Act.NONE);
                }
                x = y;
                cin = cout;
            }
        }
        long last = OnnxZoo.ch(1280, Math.max(1.0, width));
        x = n.conv("features.last", x, cin, last, 1, 1, 0, 1, bn(x, 1), Act.RELU6);
        return n.classifier(x, last, classes, "classifier");
    }

    /**
     * The gain that gives a conv reading {@code x} an output of second moment {@code m2}, as its folded batch norm
     * would (a He-scaled conv doubles its input's): every conv's output stays near unit variance, a residual
     * branch's at a quarter, so no Relu6 range saturates and the residual sums grow slowly.
     */
    private static double bn(Q x, double m2) {
        return Math.sqrt(m2 / (2 * x.m2()));
    }
}
