package dev.kiln.onnx;

import dev.kiln.ir.DType;
import dev.kiln.ir.KilnException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * Writes a statically quantised network in the QDQ form ONNX Runtime's {@code quantize_static} produces (the
 * layers {@link QdqResnet} and {@link QdqMobilenet} are made of): 8-bit activations (int8, the quantiser's default,
 * or uint8, what it recommends on x86), asymmetric, with one DequantizeLinear per reader; int8 weights, symmetric,
 * one scale per output channel, batch norm folded; int32 biases with scale x_scale * w_scale; a Relu or Relu6 after
 * a conv left out, its range given by the output's quantisation (zero point at the type's minimum, and for Relu6 a
 * top of at most 6), as the quantiser removes such activations. Scales are set from the variance the random weights
 * give each tensor (He-scaled weights keep a conv's output near its input's second moment times the gain squared),
 * about four standard deviations to the edge of the 8-bit range, as a calibration on such data would set them.
 */
final class QdqWriter {
    /** What follows a conv before its QuantizeLinear (the quantiser folds it into the output's range). */
    enum Act {
        NONE,
        RELU,
        RELU6
    }

    /** A quantised tensor: its name, scale and zero point (initializer names), and the second moment of its values. */
    record Q(String name, String scale, String zero, float s, long z, double m2) {}

    final ModelWriter m;
    private final SplittableRandom random;
    private long seed;
    private final Map<String, Integer> dequantized = new HashMap<>();
    private final DType activations;

    QdqWriter(String name, int opset, DType activations, long seed) {
        if (activations != DType.INT8 && activations != DType.UINT8)
            throw new KilnException("activations must be int8 or uint8, got " + activations);
        this.m = new ModelWriter(name, opset);
        this.activations = activations;
        this.seed = seed * 1000;
        this.random = new SplittableRandom(seed);
    }

    /**
     * {@code x} (float, second moment {@code m2}) quantised to the activation type: after a Relu the range
     * [0, 4 sigma], after a Relu6 [0, min(6, 4 sigma)], each with the type's minimum as zero point, else
     * [-4 sigma, 4 sigma] with its middle.
     */
    Q quantize(String x, String name, double m2, Act act) {
        double sigma = Math.sqrt(m2);
        long min = activations == DType.UINT8 ? 0 : -128; // the type's minimum; its middle is min + 128
        Q q =
                switch (act) {
                    case RELU -> newQ(name, (float) (4 * sigma / 255), min, m2 / 2);
                    case RELU6 -> newQ(name, (float) (Math.min(6, 4 * sigma) / 255), min, Math.min(m2 / 2, 18));
                    case NONE -> newQ(name, (float) (4 * sigma / 127), min + 128, m2);
                };
        return requantize(x, q);
    }

    /** A quantisation of scale {@code s} and zero point {@code z} named {@code name}, for values of moment m2. */
    Q newQ(String name, float s, long z, double m2) {
        String scale = m.floats(name + ".scale", new float[] {s});
        String zero = m.ints(name + ".zero_point", activations, new long[] {z});
        return new Q(name + "_q", scale, zero, s, z, m2);
    }

    /** The QuantizeLinear of float {@code x} to {@code q}. */
    Q requantize(String x, Q q) {
        m.node("QuantizeLinear", new String[] {x, q.scale, q.zero}, q.name);
        return q;
    }

    /**
     * A DequantizeLinear of {@code q} for one reader: a reader of its own each (the quantiser's {@code
     * DedicatedQDQPair}), which ONNX Runtime needs to fuse a conv whose input another node also reads (with one
     * shared DequantizeLinear it left 20 of ResNet-50's 53 convs in float).
     */
    String dequantize(Q q) {
        int k = dequantized.merge(q.name, 1, Integer::sum);
        String out = q.name + "_dq" + (k == 1 ? "" : "_" + k);
        return m.node("DequantizeLinear", new String[] {q.name, q.scale, q.zero}, out);
    }

    /**
     * A conv (batch norm folded: weight and bias) in QDQ form, {@code groups} groups: int8 weights uniform in
     * [-127, 127] with per-channel scales giving He-uniform values times {@code gain}, an int32 bias near 0.1, the
     * output quantised after {@code act}.
     */
    Q conv(String p, Q x, long cin, long cout, long k, long stride, long pad, long groups, double gain, Act act) {
        long fan = cin / groups * k * k;
        String w = m.randomInts(p + ".weight_quantized", DType.INT8, seed++, -127, 127, cout, cin / groups, k, k);
        float[] ws = new float[(int) cout], bs = new float[(int) cout];
        long[] bq = new long[(int) cout];
        for (int o = 0; o < cout; o++) {
            ws[o] = (float) (gain * Math.sqrt(6.0 / fan) / 127 * (0.8 + 0.4 * random.nextDouble()));
            bs[o] = x.s * ws[o];
            bq[o] = Math.round((random.nextDouble() * 0.2 - 0.1) / bs[o]);
        }
        String wdq = perChannel(p, "weight", w, ws, DType.INT8);
        String bdq = perChannel(p, "bias", m.ints(p + ".bias_quantized", DType.INT32, bq, cout), bs, DType.INT32);
        List<Object> attrs = new ArrayList<>(
                List.of("kernel_shape", new long[] {k, k}, "strides", new long[] {stride, stride}, "pads", new long[] {
                    pad, pad, pad, pad
                }));
        if (groups != 1) attrs.addAll(List.of("group", groups)); // (the ResNet's files stay as they were)
        String y = m.node("Conv", new String[] {dequantize(x), wdq, bdq}, p, attrs.toArray());
        return quantize(y, p, gain * gain * 2 * x.m2, act);
    }

    /** DequantizeLinear of the initializer {@code q} with one scale per output channel (axis 0), zero points 0. */
    private String perChannel(String p, String what, String q, float[] scales, DType zeroType) {
        int n = scales.length;
        String scale = m.floats(p + "." + what + "_scale", scales, n);
        String zero = m.ints(p + "." + what + "_zero_point", zeroType, new long[n], n);
        return m.node("DequantizeLinear", new String[] {q, scale, zero}, p + "." + what, "axis", 0L);
    }

    /**
     * The head: a global average pool of the dequantised {@code x} ({@code channels} channels), quantised again,
     * flattened from its dequantised values and a float Gemm to {@code classes} logits (the model's output).
     */
    ModelWriter classifier(Q x, long channels, long classes, String fc) {
        String f = m.node("GlobalAveragePool", new String[] {dequantize(x)}, "pool_f");
        Q pooled = quantize(f, "pool", x.m2, Act.NONE);
        String flat = m.node("Flatten", new String[] {dequantize(pooled)}, "flatten", "axis", 1L);
        m.node(
                "Gemm",
                new String[] {
                    flat,
                    m.weight(fc + ".weight", seed++, 1.0 / Math.sqrt(channels), classes, channels),
                    m.weight(fc + ".bias", seed++, 0.1, classes)
                },
                "logits",
                "transB",
                1L);
        return m.output("logits");
    }
}
