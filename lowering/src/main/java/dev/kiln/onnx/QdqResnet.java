package dev.kiln.onnx;

import dev.kiln.ir.DType;
import java.util.SplittableRandom;

/**
 * A bottleneck ResNet in the QDQ form ONNX Runtime's {@code quantize_static} writes (int8 activations by default, or
 * uint8, which ONNX Runtime recommends on x86; asymmetric; int8 weights, symmetric, one scale per output channel;
 * batch norm folded into the convolutions; int32 biases with scale x_scale * w_scale): every Conv reads
 * DequantizeLinear'd input and weight and its output goes through a QuantizeLinear (a Relu after a Conv or the
 * residual Add is dropped, its range given by the output's zero point at the type's minimum, as the quantiser
 * removes it); the residual Add, the max pool and the global average pool read DequantizeLinear'd 8-bit values and
 * are quantised again; the classifier's Gemm runs on the dequantised features with float weights. The scales are
 * set from the variance the random weights give each tensor (He-scaled weights keep a conv's output near unit
 * variance; the last conv of each residual branch is scaled down by 2), about four standard deviations to the edge
 * of the 8-bit range, as a calibration on such data would set them.
 */
final class QdqResnet {
    private final ModelWriter m;
    private final SplittableRandom random;
    private long seed;
    private final java.util.Map<String, Integer> dequantized = new java.util.HashMap<>();
    private final DType activations;

    private QdqResnet(String name, DType activations, long seed) {
        this.m = new ModelWriter(name, 17);
        this.activations = activations;
        this.seed = seed * 1000;
        this.random = new SplittableRandom(seed);
    }

    /** A quantised tensor: its name, scale and zero point (initializer names), and the second moment of its values. */
    private record Q(String name, String scale, String zero, float s, long z, double m2) {}

    static ModelWriter build(
            String name, int[] blocks, long base, long image, long classes, DType activations, long seed) {
        if (activations != DType.INT8 && activations != DType.UINT8)
            throw new dev.kiln.ir.KilnException("activations must be int8 or uint8, got " + activations);
        QdqResnet n = new QdqResnet(name, activations, seed);
        n.m.input("data", "batch", 3L, image, image);
        Q x = n.quantize("data", "data", 1.0 / 3, false); // uniform in [-1, 1]
        x = n.conv("stem", x, 3, base, 7, 2, 3, 1.0, true);
        Q pooled = n.newQ("stem.pool", x.s, x.z, x.m2); // a max pool keeps its input's scale, as ONNX Runtime's
        x = n.requantize(OnnxZoo.stemPool(n.m, n.dequantize(x), "stem.pool_f"), pooled);
        long cin = base;
        for (int s = 0; s < blocks.length; s++) {
            long width = base << s, cout = width * 4;
            for (int b = 0; b < blocks[s]; b++) {
                String p = "layer" + (s + 1) + "." + b;
                long stride = b == 0 && s > 0 ? 2 : 1;
                String skipIn = n.dequantize(x);
                Q y = n.conv(p + ".conv1", x, cin, width, 1, 1, 0, 1.0, true);
                y = n.conv(p + ".conv2", y, width, width, 3, stride, 1, 1.0, true);
                y = n.conv(p + ".conv3", y, width, cout, 1, 1, 0, 0.5, false);
                Q skip = b == 0 ? n.conv(p + ".down", x, cin, cout, 1, stride, 0, 1.0, false) : x;
                String sum = n.m.node(
                        "Add", new String[] {n.dequantize(y), skip == x ? skipIn : n.dequantize(skip)}, p + ".add");
                x = n.quantize(sum, p + ".out", y.m2 + skip.m2, true); // the block's Relu, in the zero point
                cin = cout;
            }
        }
        String f = n.m.node("GlobalAveragePool", new String[] {n.dequantize(x)}, "pool_f");
        Q pooledFeatures = n.quantize(f, "pool", x.m2, false);
        String flat = n.m.node("Flatten", new String[] {n.dequantize(pooledFeatures)}, "flatten", "axis", 1L);
        n.m.node(
                "Gemm",
                new String[] {
                    flat,
                    n.m.weight("fc.weight", n.seed++, 1.0 / Math.sqrt(cin), classes, cin),
                    n.m.weight("fc.bias", n.seed++, 0.1, classes)
                },
                "logits",
                "transB",
                1L);
        return n.m.output("logits");
    }

    /**
     * {@code x} (float, second moment {@code m2}) quantised to the activation type: after a Relu ({@code relu}) the
     * range [0, 4 sigma] with the type's minimum as zero point, else [-4 sigma, 4 sigma] with its middle.
     */
    private Q quantize(String x, String name, double m2, boolean relu) {
        double sigma = Math.sqrt(m2);
        long min = activations == DType.UINT8 ? 0 : -128; // the type's minimum; its middle is min + 128
        Q q = relu
                ? newQ(name, (float) (4 * sigma / 255), min, m2 / 2)
                : newQ(name, (float) (4 * sigma / 127), min + 128, m2);
        return requantize(x, q);
    }

    private Q newQ(String name, float s, long z, double m2) {
        String scale = m.floats(name + ".scale", new float[] {s});
        String zero = m.ints(name + ".zero_point", activations, new long[] {z});
        return new Q(name + "_q", scale, zero, s, z, m2);
    }

    private Q requantize(String x, Q q) {
        m.node("QuantizeLinear", new String[] {x, q.scale, q.zero}, q.name);
        return q;
    }

    /**
     * A DequantizeLinear of {@code q} for one reader: a reader of its own each (the quantiser's {@code
     * DedicatedQDQPair}), which ONNX Runtime needs to fuse a conv whose input another node also reads (with one
     * shared DequantizeLinear it left 20 of ResNet-50's 53 convs in float).
     */
    private String dequantize(Q q) {
        int k = dequantized.merge(q.name, 1, Integer::sum);
        String out = q.name + "_dq" + (k == 1 ? "" : "_" + k);
        return m.node("DequantizeLinear", new String[] {q.name, q.scale, q.zero}, out);
    }

    /**
     * A conv (batch norm folded: weight and bias) in QDQ form: int8 weights uniform in [-127, 127] with per-channel
     * scales giving He-uniform values times {@code gain}, an int32 bias near 0.1, the output quantised.
     */
    private Q conv(String p, Q x, long cin, long cout, long k, long stride, long pad, double gain, boolean relu) {
        long fan = cin * k * k;
        String w = m.randomInts(p + ".weight_quantized", DType.INT8, seed++, -127, 127, cout, cin, k, k);
        float[] ws = new float[(int) cout], bs = new float[(int) cout];
        long[] bq = new long[(int) cout];
        for (int o = 0; o < cout; o++) {
            ws[o] = (float) (gain * Math.sqrt(6.0 / fan) / 127 * (0.8 + 0.4 * random.nextDouble()));
            bs[o] = x.s * ws[o];
            bq[o] = Math.round((random.nextDouble() * 0.2 - 0.1) / bs[o]);
        }
        String wdq = perChannel(p, "weight", w, ws, DType.INT8);
        String bdq = perChannel(p, "bias", m.ints(p + ".bias_quantized", DType.INT32, bq, cout), bs, DType.INT32);
        String y = m.node(
                "Conv",
                new String[] {dequantize(x), wdq, bdq},
                p,
                "kernel_shape",
                new long[] {k, k},
                "strides",
                new long[] {stride, stride},
                "pads",
                new long[] {pad, pad, pad, pad});
        return quantize(y, p, gain * gain * 2 * x.m2, relu);
    }

    /** DequantizeLinear of the initializer {@code q} with one scale per output channel (axis 0), zero points 0. */
    private String perChannel(String p, String what, String q, float[] scales, DType zeroType) {
        int n = scales.length;
        String scale = m.floats(p + "." + what + "_scale", scales, n);
        String zero = m.ints(p + "." + what + "_zero_point", zeroType, new long[n], n);
        return m.node("DequantizeLinear", new String[] {q, scale, zero}, p + "." + what, "axis", 0L);
    }
}
