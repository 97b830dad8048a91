package dev.kiln.models;

import static dev.kiln.ir.DType.FLOAT32;

import dev.kiln.graph.Graph;
import dev.kiln.graph.GraphBuilder;
import dev.kiln.graph.Value;
import dev.kiln.ir.KilnException;

/**
 * The model zoo: networks as {@link Graph}s with seeded random weights (no model hub is reachable;
 * the ONNX importer brings real ones), batch norm unfolded as a framework exports it. Activations
 * are NHWC, conv weights HWIO, dense weights [out, in] (as PyTorch's Linear). Weights are drawn
 * uniform with He-like scales and batch-norm statistics near the identity, so activations stay
 * of order one through the whole network (the last batch norm of each residual block is damped,
 * as with zero-init residuals) and float32 comparisons stay meaningful.
 *
 * <ul>
 *   <li>{@link #resnet50}: ResNet-50 v1.5 (torchvision: stride on the 3x3), 53 convs, 8.18 GFLOP at 224.</li>
 *   <li>{@link #resnet18}: ResNet-18 with a chosen base width and image size; small ones tune in seconds.</li>
 *   <li>{@link #mobilenetV2}: MobileNet-V2 (width 1.0, torchvision; ReLU6), 52 convs, 0.60 GFLOP at 224.</li>
 *   <li>{@link #bertLayer}: one BERT encoder layer (post-LN, exact GELU, eps 1e-12), 1.86 GFLOP for base at 128.</li>
 * </ul>
 */
public final class Models {
    private Models() {}

    /** ResNet-50 v1.5 at {@code batch} x {@code image} x {@code image} x 3, 1000 classes. */
    public static Graph resnet50(int batch, int image, long seed) {
        return resnet("resnet50", batch, image, 64, new int[] {3, 4, 6, 3}, true, 1000, seed);
    }

    /**
     * ResNet-18 at {@code image} x {@code image}, base width {@code width} (64 for the real one), {@code classes}
     * classes.
     */
    public static Graph resnet18(int batch, int image, int width, int classes, long seed) {
        return resnet("resnet18", batch, image, width, new int[] {2, 2, 2, 2}, false, classes, seed);
    }

    private static Graph resnet(
            String name, int batch, int image, int width, int[] blocks, boolean bottleneck, int classes, long seed) {
        checkPositive(name, "batch", batch);
        checkPositive(name, "image", image);
        checkPositive(name, "width", width);
        Net n = new Net(name, seed);
        Value x = n.g.input("data", FLOAT32, batch, image, image, 3);
        x = n.convBn("conv1", x, 7, 2, 3, width, 1, true, 1.0);
        x = n.g.maxPool2d("maxpool", x, "NHWC", 3, 2, 1);
        int expansion = bottleneck ? 4 : 1;
        for (int stage = 0; stage < blocks.length; stage++) {
            int w = width << stage;
            for (int b = 0; b < blocks[stage]; b++) {
                int stride = stage > 0 && b == 0 ? 2 : 1;
                String p = "layer" + (stage + 1) + "." + b;
                long in = channels(x);
                Value shortcut = x;
                if (stride != 1 || in != (long) w * expansion) {
                    shortcut = n.convBn(p + ".downsample", x, 1, stride, 0, w * expansion, 1, false, 1.0);
                }
                Value y;
                if (bottleneck) {
                    y = n.convBn(p + ".conv1", x, 1, 1, 0, w, 1, true, 1.0);
                    y = n.convBn(p + ".conv2", y, 3, stride, 1, w, 1, true, 1.0);
                    y = n.convBn(p + ".conv3", y, 1, 1, 0, w * 4, 1, false, 0.2);
                } else {
                    y = n.convBn(p + ".conv1", x, 3, stride, 1, w, 1, true, 1.0);
                    y = n.convBn(p + ".conv2", y, 3, 1, 1, w, 1, false, 0.2);
                }
                x = n.g.relu(p + ".relu", n.g.add(p + ".add", y, shortcut));
            }
        }
        return n.head(x, classes);
    }

    /** MobileNet-V2 (width 1.0) at {@code batch} x {@code image} x {@code image} x 3, 1000 classes. */
    public static Graph mobilenetV2(int batch, int image, long seed) {
        checkPositive("mobilenet_v2", "batch", batch);
        checkPositive("mobilenet_v2", "image", image);
        Net n = new Net("mobilenet_v2", seed);
        Value x = n.g.input("data", FLOAT32, batch, image, image, 3);
        x = n.convBnRelu6("features.0", x, 3, 2, 1, 32, 1, 1.0);
        int[][] settings = {
            {1, 16, 1, 1}, {6, 24, 2, 2}, {6, 32, 3, 2}, {6, 64, 4, 2}, {6, 96, 3, 1}, {6, 160, 3, 2}, {6, 320, 1, 1}
        };
        int block = 1;
        for (int[] s : settings) {
            for (int i = 0; i < s[2]; i++) {
                int stride = i == 0 ? s[3] : 1;
                long in = channels(x);
                long hidden = in * s[0];
                String p = "features." + block++;
                Value y = x;
                if (s[0] != 1) y = n.convBnRelu6(p + ".expand", y, 1, 1, 0, hidden, 1, 1.0);
                y = n.convBnRelu6(p + ".dw", y, 3, stride, 1, hidden, hidden, 1.0);
                boolean residual = stride == 1 && in == s[1];
                y = n.convBn(p + ".project", y, 1, 1, 0, s[1], 1, false, residual ? 0.2 : 1.0);
                x = residual ? n.g.add(p + ".add", x, y) : y;
            }
        }
        x = n.convBnRelu6("features.18", x, 1, 1, 0, 1280, 1, 1.0);
        return n.head(x, 1000);
    }

    /**
     * One BERT encoder layer on {@code [seq, hidden]} (batch 1): self-attention with {@code heads}
     * heads and an additive mask, output projection and residual, layer norm, the GELU
     * feed-forward of width {@code ffn} and residual, layer norm. BERT-base: (128, 768, 12, 3072).
     */
    public static Graph bertLayer(int seq, int hidden, int heads, int ffn, long seed) {
        String name = "bert_layer";
        checkPositive(name, "seq", seq);
        checkPositive(name, "hidden", hidden);
        checkPositive(name, "heads", heads);
        checkPositive(name, "ffn", ffn);
        if (hidden % heads != 0) throw new KilnException(name + ": heads " + heads + " must divide hidden " + hidden);
        int dh = hidden / heads;
        Net n = new Net(name, seed);
        GraphBuilder g = n.g;
        Value x = g.input("hidden_states", FLOAT32, seq, hidden);
        Value q = n.linear("attention.query", x, hidden);
        Value k = n.linear("attention.key", x, hidden);
        Value v = n.linear("attention.value", x, hidden);
        q = g.transpose("q_heads", g.reshape("q_split", q, seq, heads, dh), 1, 0, 2); // [h, s, dh]
        k = g.transpose("k_heads", g.reshape("k_split", k, seq, heads, dh), 1, 2, 0); // [h, dh, s]
        v = g.transpose("v_heads", g.reshape("v_split", v, seq, heads, dh), 1, 0, 2); // [h, s, dh]
        Value scores = g.batchMatmul("scores", q, k, false, false); // [h, s, s]
        scores = g.multiply("scores_scaled", scores, g.fill("attention.scale", (float) (1 / Math.sqrt(dh)), 1));
        scores = g.add("scores_masked", scores, g.uniform("attention.mask", n.nextSeed(), -0.5, 0, seq));
        Value probs = g.softmax("probs", scores, -1);
        Value ctx = g.batchMatmul("context", probs, v, false, false); // [h, s, dh]
        ctx = g.reshape("context_merged", g.transpose("context_heads", ctx, 1, 0, 2), seq, hidden);
        Value attn = g.add("attention.residual", n.linear("attention.output", ctx, hidden), x);
        attn = n.layerNorm("attention.layer_norm", attn, hidden);
        Value h = g.gelu("intermediate.gelu", n.linear("intermediate", attn, ffn));
        Value out = g.add("output.residual", n.linear("output", h, hidden), attn);
        out = n.layerNorm("output.layer_norm", out, hidden);
        return g.output(out).build();
    }

    static long channels(Value v) {
        return v.shape().getLast();
    }

    private static void checkPositive(String model, String what, long v) {
        if (v < 1) throw new KilnException(model + ": " + what + " must be positive, got " + v);
    }

    /** A builder with the layers the models share and a seed counter. */
    private static final class Net {
        final GraphBuilder g;
        private final long seed;
        private long counter;

        Net(String name, long seed) {
            this.g = new GraphBuilder(name);
            this.seed = seed;
        }

        long nextSeed() {
            return seed * 1_000_003L + counter++;
        }

        /** conv (no bias) + batch norm (+ relu); {@code gamma} scales the batch norm's gain. */
        Value convBn(String p, Value x, int k, int stride, int pad, long out, long groups, boolean relu, double gamma) {
            long in = channels(x);
            double bound = Math.sqrt(6.0 / (k * k * (in / groups)));
            Value w = g.weight(p + ".weight", nextSeed(), bound, k, k, in / groups, out);
            Value y = g.conv2d(p, x, w, "NHWC", stride, pad, groups);
            y = batchNorm(p + ".bn", y, out, gamma);
            return relu ? g.relu(p + ".relu", y) : y;
        }

        Value convBnRelu6(String p, Value x, int k, int stride, int pad, long out, long groups, double gamma) {
            return g.clip(p + ".relu6", convBn(p, x, k, stride, pad, out, groups, false, gamma), 0, 6);
        }

        Value batchNorm(String p, Value x, long c, double gamma) {
            Value mean = g.uniform(p + ".running_mean", nextSeed(), -0.1, 0.1, c);
            Value var = g.uniform(p + ".running_var", nextSeed(), 0.8, 1.2, c);
            Value gm = g.uniform(p + ".weight", nextSeed(), 0.5 * gamma, gamma, c);
            Value bt = g.uniform(p + ".bias", nextSeed(), -0.1, 0.1, c);
            return g.batchNorm(p, x, mean, var, gm, bt, -1, 1e-5);
        }

        /** dense [out, in] + bias. */
        Value linear(String p, Value x, long out) {
            long in = channels(x);
            Value w = g.weight(p + ".weight", nextSeed(), Math.sqrt(3.0 / in), out, in);
            Value b = g.weight(p + ".bias", nextSeed(), 0.1, out);
            return g.biasAdd(p + ".bias_add", g.dense(p, x, w), b, -1);
        }

        Value layerNorm(String p, Value x, long c) {
            Value gm = g.uniform(p + ".weight", nextSeed(), 0.8, 1.2, c);
            Value bt = g.weight(p + ".bias", nextSeed(), 0.1, c);
            return g.layerNorm(p, x, gm, bt, 1, 1e-12);
        }

        /** global average pool, flatten, dense + bias. */
        Graph head(Value x, int classes) {
            long c = channels(x);
            long batch = x.shape().getFirst();
            Value pooled = g.globalAvgPool2d("avgpool", x, "NHWC");
            Value flat = g.reshape("flatten", pooled, batch, c);
            return g.output(linear("fc", flat, classes)).build();
        }
    }
}
