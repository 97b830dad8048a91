package dev.kiln.onnx;

import dev.kiln.ir.DType;
import dev.kiln.onnx.proto.Onnx.TensorProto;

/**
 * ONNX models written the way PyTorch exports them (NCHW, batch norm unfolded, Shape/Gather/
 * Unsqueeze/Concat chains feeding Reshape), with seeded random weights and a symbolic batch axis
 * "batch": ResNet-50 and smaller ResNets, MobileNet-V2 (any width, any number of its stages), a
 * BERT encoder layer, a whole BERT encoder with embeddings (int64 token ids), and a quantised MLP. No model hub is
 * reachable here; these are what the tests and {@code ./kiln onnx --write} use.
 */
public final class OnnxZoo {
    private OnnxZoo() {}

    /** ResNet-50 v1.5 (bottleneck blocks 3, 4, 6, 3; stride on the 3x3 conv), 1000 classes. */
    public static ModelWriter resnet50(long image, long seed) {
        return resnet("resnet50", new int[] {3, 4, 6, 3}, 64, image, 1000, seed);
    }

    /** A bottleneck ResNet with {@code blocks[i]} blocks in stage i (width {@code base}, x2 per stage). */
    public static ModelWriter resnet(String name, int[] blocks, long base, long image, long classes, long seed) {
        Net n = new Net(name, 17, seed);
        n.m.input("data", "batch", 3L, image, image);
        String x = n.convBn("stem", "data", 3, base, 7, 2, 3, 1, "Relu");
        x = stemPool(n.m, x, "stem.pool");
        long cin = base;
        for (int s = 0; s < blocks.length; s++) {
            long width = base << s, cout = width * 4;
            for (int b = 0; b < blocks[s]; b++) {
                String p = "layer" + (s + 1) + "." + b;
                long stride = b == 0 && s > 0 ? 2 : 1;
                String y = n.convBn(p + ".conv1", x, cin, width, 1, 1, 0, 1, "Relu");
                y = n.convBn(p + ".conv2", y, width, width, 3, stride, 1, 1, "Relu");
                y = n.convBn(p + ".conv3", y, width, cout, 1, 1, 0, 1, null);
                String skip = b == 0 ? n.convBn(p + ".down", x, cin, cout, 1, stride, 0, 1, null) : x;
                x = n.m.node("Relu", new String[] {n.m.node("Add", new String[] {y, skip}, p + ".add")}, p + ".out");
                cin = cout;
            }
        }
        x = n.m.node("GlobalAveragePool", new String[] {x}, "pool");
        x = n.m.node("Flatten", new String[] {x}, "flatten", "axis", 1L);
        n.m.node(
                "Gemm",
                new String[] {x, n.w("fc.weight", 1.0 / Math.sqrt(cin), classes, cin), n.w("fc.bias", 0.1, classes)},
                "logits",
                "transB",
                1L);
        return n.m.output("logits");
    }

    /** A ResNet stem's 3x3 max pool of stride 2 (pads 1) of {@code x}, named {@code out}. */
    static String stemPool(ModelWriter m, String x, String out) {
        return m.node(
                "MaxPool",
                new String[] {x},
                out,
                "kernel_shape",
                new long[] {3, 3},
                "strides",
                new long[] {2, 2},
                "pads",
                new long[] {1, 1, 1, 1});
    }

    /**
     * ResNet-50 v1.5 statically quantised in QDQ form as ONNX Runtime's {@code quantize_static} writes it, with
     * activations of type {@code activations} (int8, its default, or uint8, what it recommends on x86) and
     * per-channel int8 weights (see {@link #qdqResnet}).
     */
    public static ModelWriter qdqResnet50(long image, DType activations, long seed) {
        String name = activations == DType.UINT8 ? "qdq_resnet50_u8" : "qdq_resnet50";
        return qdqResnet(name, new int[] {3, 4, 6, 3}, 64, image, 1000, activations, seed);
    }

    /**
     * A bottleneck ResNet as {@link #resnet}, statically quantised in QDQ form: batch norm folded, every Conv between
     * DequantizeLinear'd input (int8 or uint8 {@code activations}) and int8 weights (one scale per output channel)
     * and a QuantizeLinear of its output (the Relu in the zero point at the type's minimum, as the quantiser leaves
     * it), int32 biases, the residual Add and the pools on dequantised values and quantised again, one
     * DequantizeLinear per reader, a float classifier; scales about four standard deviations of each tensor.
     */
    public static ModelWriter qdqResnet(
            String name, int[] blocks, long base, long image, long classes, DType activations, long seed) {
        return QdqResnet.build(name, blocks, base, image, classes, activations, seed);
    }

    /**
     * MobileNet-V2 (width 1.0, all 7 stages, 1000 classes) statically quantised in QDQ form as ONNX Runtime's {@code
     * quantize_static} writes it, with activations of type {@code activations} (int8 or uint8) and per-channel int8
     * weights, depthwise convs included (see {@link #qdqMobilenetV2(String, long, double, int, long, DType, long)}).
     */
    public static ModelWriter qdqMobilenetV2(long image, DType activations, long seed) {
        String name = activations == DType.UINT8 ? "qdq_mobilenetv2_u8" : "qdq_mobilenetv2";
        return qdqMobilenetV2(name, image, 1.0, 7, 1000, activations, seed);
    }

    /**
     * MobileNet-V2 as {@link #mobilenetV2(String, long, double, int, long, long)}, statically quantised in QDQ form:
     * batch norm folded, every Conv (depthwise too) between DequantizeLinear'd 8-bit input and int8 weights with one
     * scale per output channel and a QuantizeLinear of its output (each Relu6 in the output's range: zero point at
     * the type's minimum, top at most 6), int32 biases, the residual Add and the pool on dequantised values and
     * quantised again, one DequantizeLinear per reader, a float classifier.
     */
    public static ModelWriter qdqMobilenetV2(
            String name, long image, double width, int stages, long classes, DType activations, long seed) {
        return QdqMobilenet.build(name, image, width, stages, classes, activations, seed);
    }

    /** MobileNet-V2 (width 1.0, all 7 stages), 1000 classes. */
    public static ModelWriter mobilenetV2(long image, long seed) {
        return mobilenetV2("mobilenetv2", image, 1.0, 7, 1000, seed);
    }

    /**
     * MobileNet-V2's inverted residual stages: expansion t, channels c, blocks n, first stride s (the float model's and
     * {@link QdqMobilenet}'s).
     */
    static final long[][] MOBILENET_V2_STAGES = {
        {1, 16, 1, 1}, {6, 24, 2, 2}, {6, 32, 3, 2}, {6, 64, 4, 2}, {6, 96, 3, 1}, {6, 160, 3, 2}, {6, 320, 1, 1}
    };

    /** MobileNet-V2 with channels scaled by {@code width} and only its first {@code stages} stages. */
    public static ModelWriter mobilenetV2(String name, long image, double width, int stages, long classes, long seed) {
        long[][] settings = MOBILENET_V2_STAGES;
        Net n = new Net(name, 13, seed);
        n.m.input("input", "batch", 3L, image, image);
        long cin = ch(32, width);
        String x = n.convBn("features.0", "input", 3, cin, 3, 2, 1, 1, "Clip");
        for (int s = 0; s < stages; s++) {
            long t = settings[s][0], cout = ch(settings[s][1], width);
            for (int b = 0; b < settings[s][2]; b++) {
                String p = "features." + (s + 1) + "." + b;
                long stride = b == 0 ? settings[s][3] : 1, hidden = cin * t;
                String y = t == 1 ? x : n.convBn(p + ".expand", x, cin, hidden, 1, 1, 0, 1, "Clip");
                y = n.convBn(p + ".dw", y, hidden, hidden, 3, stride, 1, hidden, "Clip");
                y = n.convBn(p + ".project", y, hidden, cout, 1, 1, 0, 1, null);
                x = stride == 1 && cin == cout ? n.m.node("Add", new String[] {x, y}, p + ".add") : y;
                cin = cout;
            }
        }
        long last = ch(1280, Math.max(1.0, width));
        x = n.convBn("features.last", x, cin, last, 1, 1, 0, 1, "Clip");
        x = n.m.node("GlobalAveragePool", new String[] {x}, "pool");
        // x.view(x.size(0), -1) as PyTorch exports it
        String shape = n.m.node("Shape", new String[] {x}, "pool.shape");
        String n0 = n.m.node(
                "Gather", new String[] {shape, n.m.longs("zero", new long[] {0}, new long[] {})}, "pool.n", "axis", 0L);
        String n1 = n.m.node("Unsqueeze", new String[] {n0, n.m.longs("axes0", 0)}, "pool.n1");
        String target = n.m.node("Concat", new String[] {n1, n.m.longs("minus1", -1)}, "pool.target", "axis", 0L);
        x = n.m.node("Reshape", new String[] {x, target}, "flat");
        n.m.node(
                "Gemm",
                new String[] {
                    x,
                    n.w("classifier.weight", 1.0 / Math.sqrt(last), classes, last),
                    n.w("classifier.bias", 0.1, classes)
                },
                "logits",
                "transB",
                1L);
        return n.m.output("logits");
    }

    /**
     * BERT-base's encoder layer: sequence 128, hidden 768, 12 heads, FFN 3072 (opset 20: LayerNormalization and Gelu).
     */
    public static ModelWriter bertLayer(long seq, long seed) {
        return bertLayer("bert_layer", seq, 768, 12, 3072, 20, seed);
    }

    /**
     * A BERT encoder layer on input "hidden" [batch, seq, dim]. From opset 17 layer norm is
     * LayerNormalization, from 20 GELU is Gelu; before, both are spelled out (ReduceMean, Pow, Sqrt,
     * Erf) as older exporters write them.
     */
    public static ModelWriter bertLayer(String name, long seq, long dim, long heads, long ffn, int opset, long seed) {
        return bertLayer(new Net(name, opset, seed), seq, dim, heads, ffn);
    }

    /**
     * BERT-base's encoder layer (sequence 128) as ONNX Runtime's dynamic quantisation ({@code quantize_dynamic}, int8
     * weights) writes it: see {@link #dynamicQuantizedBertLayer(String, long, long, long, long, long)}.
     */
    public static ModelWriter dynamicQuantizedBertLayer(long seq, long seed) {
        return dynamicQuantizedBertLayer("qbert_layer", seq, 768, 12, 3072, seed);
    }

    /**
     * A BERT encoder layer (opset 20) with its six Linear layers quantised as ONNX Runtime's {@code
     * quantize_dynamic} writes them: the input quantised at run time (DynamicQuantizeLinear), MatMulInteger with an
     * int8 weight (per tensor, symmetric: zero point 0), the int32 product cast to float32 and multiplied by the
     * input's scale times the weight's, then the bias added. The attention's products of two activations, the
     * softmax, GELU and layer norms stay float32. Weights stay in [-63, 63] as in {@link #quantizedMlp}.
     */
    public static ModelWriter dynamicQuantizedBertLayer(
            String name, long seq, long dim, long heads, long ffn, long seed) {
        Net n = new Net(name, 20, seed);
        n.dynamicInt8 = true;
        return bertLayer(n, seq, dim, heads, ffn);
    }

    private static ModelWriter bertLayer(Net n, long seq, long dim, long heads, long ffn) {
        n.m.input("hidden", "batch", seq, dim);
        n.m.node("Identity", new String[] {encoderLayer(n, "", "hidden", dim, heads, ffn, null)}, "output");
        return n.m.output("output");
    }

    /**
     * BERT-base with embeddings: vocabulary 30522, 512 positions, hidden 768, 12 heads, FFN 3072, 12 layers (opset 20).
     */
    public static ModelWriter bertBase(long seq, long seed) {
        return bert("bert_base", 30522, 512, seq, 768, 12, 3072, 12, 20, seed);
    }

    /**
     * A BERT encoder with embeddings, as Hugging Face exports it: int64 inputs "input_ids",
     * "token_type_ids" and "attention_mask" [batch, seq]; word and token-type embeddings gathered
     * with the run-time ids, position embeddings gathered with constant position ids (folded at
     * import), their sum layer-normalised; the mask becomes {@code (1 - mask) * -10000} added to the
     * attention scores of each of the {@code layers} encoder layers; output "last_hidden_state".
     */
    public static ModelWriter bert(
            String name,
            long vocab,
            long positions,
            long seq,
            long dim,
            long heads,
            long ffn,
            int layers,
            int opset,
            long seed) {
        Net n = new Net(name, opset, seed);
        ModelWriter m = n.m;
        m.input("input_ids", DType.INT64, "batch", seq)
                .input("token_type_ids", DType.INT64, "batch", seq)
                .input("attention_mask", DType.INT64, "batch", seq);
        String words =
                m.node("Gather", new String[] {n.w("embeddings.word", 0.5, vocab, dim), "input_ids"}, "emb.words");
        long[] pos = new long[(int) positions];
        for (int i = 0; i < pos.length; i++) pos[i] = i;
        String posIds = m.node(
                "Slice",
                new String[] {
                    m.longs("embeddings.position_ids", pos, 1, positions),
                    m.longs("pos.start", 0),
                    m.longs("pos.end", seq),
                    m.longs("pos.axes", 1)
                },
                "emb.position_ids");
        String position = m.node(
                "Gather", new String[] {n.w("embeddings.position", 0.5, positions, dim), posIds}, "emb.positions");
        String types = m.node(
                "Gather", new String[] {n.w("embeddings.token_type", 0.5, 2, dim), "token_type_ids"}, "emb.types");
        String e = m.node(
                "Add", new String[] {m.node("Add", new String[] {words, types}, "emb.sum1"), position}, "emb.sum");
        String x = n.layerNorm("emb.ln", e, dim);
        // extended mask: (1 - mask[:, None, None, :]) * -10000
        String mask = m.node("Unsqueeze", new String[] {"attention_mask", m.longs("mask.axes", 1, 2)}, "mask.4d");
        mask = m.node("Cast", new String[] {mask}, "mask.f", "to", (long) TensorProto.DataType.FLOAT_VALUE);
        mask = m.node("Sub", new String[] {m.floats("mask.one", new float[] {1f}), mask}, "mask.inv");
        mask = m.node("Mul", new String[] {mask, m.floats("mask.big", new float[] {-10000f})}, "mask.add");
        for (int l = 0; l < layers; l++) x = encoderLayer(n, "layer" + l + ".", x, dim, heads, ffn, mask);
        m.node("Identity", new String[] {x}, "last_hidden_state");
        return m.output("last_hidden_state");
    }

    /**
     * One post-LN encoder layer on x [batch, seq, dim] (names prefixed by {@code p}); {@code mask} (or null) is added
     * to the scores.
     */
    private static String encoderLayer(Net n, String p, String x, long dim, long heads, long ffn, String mask) {
        ModelWriter m = n.m;
        long hd = dim / heads;
        String q = n.linear(p + "attn.q", x, dim, dim),
                k = n.linear(p + "attn.k", x, dim, dim),
                v = n.linear(p + "attn.v", x, dim, dim);
        // new_shape = x.size()[:-1] + (heads, head_dim)
        String sh = m.node("Shape", new String[] {x}, p + "attn.shape");
        String lead = m.node("Slice", new String[] {sh, m.longs(p + "s0", 0), m.longs(p + "s2", 2)}, p + "attn.lead");
        String split = m.node(
                "Concat", new String[] {lead, m.longs(p + "heads", heads, hd)}, p + "attn.split_shape", "axis", 0L);
        q = m.node(
                "Transpose",
                new String[] {m.node("Reshape", new String[] {q, split}, p + "attn.q4")},
                p + "attn.qt",
                "perm",
                new long[] {0, 2, 1, 3});
        k = m.node(
                "Transpose",
                new String[] {m.node("Reshape", new String[] {k, split}, p + "attn.k4")},
                p + "attn.kt",
                "perm",
                new long[] {0, 2, 3, 1});
        v = m.node(
                "Transpose",
                new String[] {m.node("Reshape", new String[] {v, split}, p + "attn.v4")},
                p + "attn.vt",
                "perm",
                new long[] {0, 2, 1, 3});
        String scores = m.node("MatMul", new String[] {q, k}, p + "attn.scores");
        scores = m.node(
                "Div",
                new String[] {scores, m.floats(p + "attn.scale", new float[] {(float) Math.sqrt(hd)})},
                p + "attn.scaled");
        if (mask != null) scores = m.node("Add", new String[] {scores, mask}, p + "attn.masked");
        String probs = m.node("Softmax", new String[] {scores}, p + "attn.probs", "axis", -1L);
        String ctx = m.node(
                "Transpose",
                new String[] {m.node("MatMul", new String[] {probs, v}, p + "attn.ctx4")},
                p + "attn.ctxt",
                "perm",
                new long[] {0, 2, 1, 3});
        ctx = m.node("Reshape", new String[] {ctx, m.longs(p + "merge", 0, 0, dim)}, p + "attn.ctx");
        String a = m.node("Add", new String[] {n.linear(p + "attn.out", ctx, dim, dim), x}, p + "attn.res");
        a = n.layerNorm(p + "attn.ln", a, dim);
        String h = n.linear(p + "ffn.in", a, dim, ffn);
        if (n.opset >= 20) {
            h = m.node("Gelu", new String[] {h}, p + "ffn.gelu");
        } else { // x * 0.5 * (1 + erf(x / sqrt(2)))
            String e = m.node(
                    "Erf",
                    new String[] {
                        m.node(
                                "Div",
                                new String[] {h, m.floats(p + "sqrt2", new float[] {(float) Math.sqrt(2)})},
                                p + "ffn.xs")
                    },
                    p + "ffn.erf");
            e = m.node("Add", new String[] {e, m.floats(p + "one", new float[] {1f})}, p + "ffn.erf1");
            h = m.node(
                    "Mul",
                    new String[] {
                        m.node("Mul", new String[] {h, e}, p + "ffn.xe"), m.floats(p + "half", new float[] {0.5f})
                    },
                    p + "ffn.gelu");
        }
        String o = m.node("Add", new String[] {n.linear(p + "ffn.out", h, ffn, dim), a}, p + "ffn.res");
        return n.layerNorm(p + "ffn.ln", o, dim);
    }

    /**
     * A quantised two-layer MLP on input "x" [batch, in] (float32): QuantizeLinear to uint8,
     * QLinearMatMul with int8 weights (per-column scales) to uint8 "hidden_q", DequantizeLinear, Relu,
     * QuantizeLinear, MatMulInteger (int8 weights, scalar zero points) to the int32 "acc", Cast to
     * float and a Mul by the combined scale to "logits". Weights stay in [-63, 63], so u8 x s8
     * products fit the int16 pair sums of AVX2 kernels (ONNX Runtime's MLAS saturates there).
     */
    public static ModelWriter quantizedMlp(String name, long in, long hidden, long out, long seed) {
        ModelWriter m = new ModelWriter(name, 21);
        long s0 = seed * 1000;
        m.input("x", "batch", in);
        String sx = m.floats("x.scale", new float[] {0.0125f}), zx = m.ints("x.zero", DType.UINT8, new long[] {128});
        String xq = m.node("QuantizeLinear", new String[] {"x", sx, zx}, "x_q");
        String w1 = m.randomInts("fc1.weight_q", DType.INT8, s0++, -63, 63, in, hidden);
        String s1 = m.uniform("fc1.weight_scale", s0++, 0.002, 0.006, hidden);
        String z1 = m.ints("fc1.weight_zero", DType.INT8, new long[(int) hidden], hidden);
        String sh = m.floats("hidden.scale", new float[] {0.04f}),
                zh = m.ints("hidden.zero", DType.UINT8, new long[] {100});
        String h = m.node("QLinearMatMul", new String[] {xq, sx, zx, w1, s1, z1, sh, zh}, "hidden_q");
        String hf = m.node(
                "Relu", new String[] {m.node("DequantizeLinear", new String[] {h, sh, zh}, "hidden")}, "hidden_relu");
        String sr = m.floats("relu.scale", new float[] {0.03f}), zr = m.ints("relu.zero", DType.UINT8, new long[] {3});
        String rq = m.node("QuantizeLinear", new String[] {hf, sr, zr}, "relu_q");
        String w2 = m.randomInts("fc2.weight_q", DType.INT8, s0++, -63, 63, hidden, out);
        String acc = m.node(
                "MatMulInteger",
                new String[] {rq, w2, zr, m.ints("fc2.weight_zero", DType.INT8, new long[] {-2})},
                "acc");
        String f = m.node("Cast", new String[] {acc}, "acc_f", "to", (long) TensorProto.DataType.FLOAT_VALUE);
        m.node("Mul", new String[] {f, m.floats("fc2.scale", new float[] {0.03f * 0.005f})}, "logits");
        return m.output("logits").output("hidden_q", DType.UINT8).output("acc", DType.INT32);
    }

    /**
     * A quantised CNN in ONNX Runtime's QOperator form (what its static quantisation writes for convolutions) on
     * input "x" [batch, 3, size, size] (float32): QuantizeLinear to uint8, a 3x3 stride-2 QLinearConv to
     * {@code channels}, a 3x3 one, a 1x1 stride-2 one to twice the channels (int8 weights with per-channel scales,
     * int32 biases; uint8 "conv3_q"), DequantizeLinear and GlobalAveragePool to "features" [batch, 2 * channels, 1,
     * 1]. Weights stay in [-63, 63] as in {@link #quantizedMlp}.
     */
    public static ModelWriter quantizedCnn(String name, long channels, long size, long seed) {
        ModelWriter m = new ModelWriter(name, 21);
        long s0 = seed * 1000;
        m.input("x", "batch", 3L, size, size);
        String sx = m.floats("x.scale", new float[] {0.0125f}), zx = m.ints("x.zero", DType.UINT8, new long[] {128});
        String q = m.node("QuantizeLinear", new String[] {"x", sx, zx}, "x_q");
        long[][] layers = {{3, channels, 3, 2}, {channels, channels, 3, 1}, {channels, 2 * channels, 1, 2}};
        float[] outScale = {0.04f, 0.05f, 0.06f};
        long[] outZero = {100, 90, 80};
        for (int i = 0; i < layers.length; i++) {
            long ci = layers[i][0], co = layers[i][1], k = layers[i][2], stride = layers[i][3];
            String p = "conv" + (i + 1);
            String w = m.randomInts(p + ".weight_q", DType.INT8, s0++, -63, 63, co, ci, k, k);
            String ws = m.uniform(p + ".weight_scale", s0++, 0.002, 0.006, co);
            String wz = m.ints(p + ".weight_zero", DType.INT8, new long[(int) co], co);
            String b = m.randomInts(p + ".bias_q", DType.INT32, s0++, -3000, 3000, co);
            String ys = m.floats(p + ".scale", new float[] {outScale[i]}),
                    yz = m.ints(p + ".zero", DType.UINT8, new long[] {outZero[i]});
            long pad = k / 2;
            q = m.node(
                    "QLinearConv",
                    new String[] {q, sx, zx, w, ws, wz, ys, yz, b},
                    p + "_q",
                    "strides",
                    new long[] {stride, stride},
                    "pads",
                    new long[] {pad, pad, pad, pad});
            sx = ys;
            zx = yz;
        }
        String f = m.node("DequantizeLinear", new String[] {q, sx, zx}, "conv3");
        m.node("GlobalAveragePool", new String[] {f}, "features");
        return m.output("features").output("conv3_q", DType.UINT8);
    }

    static long ch(long c, double width) {
        return Math.max(8, Math.round(c * width / 8) * 8);
    }

    /** Shared layer helpers over one writer and one stream of seeds. */
    private static final class Net {
        final ModelWriter m;
        final int opset;
        long seed;
        /** Whether {@link #linear} writes ONNX Runtime's dynamic int8 quantisation of the MatMul. */
        boolean dynamicInt8;

        private final java.util.Set<String> quantized = new java.util.HashSet<>();

        Net(String name, int opset, long seed) {
            this.m = new ModelWriter(name, opset);
            this.opset = opset;
            this.seed = seed * 1000;
        }

        String w(String name, double scale, long... shape) {
            return m.weight(name, seed++, scale, shape);
        }

        /** Conv (no bias) + BatchNormalization + optional Relu or Clip(0, 6). */
        String convBn(String p, String x, long cin, long cout, long k, long stride, long pad, long groups, String act) {
            String w = w(p + ".weight", Math.sqrt(3.0 / (cin / groups * k * k)), cout, cin / groups, k, k);
            String y = m.node(
                    "Conv",
                    new String[] {x, w},
                    p,
                    "kernel_shape",
                    new long[] {k, k},
                    "strides",
                    new long[] {stride, stride},
                    "pads",
                    new long[] {pad, pad, pad, pad},
                    "dilations",
                    new long[] {1, 1},
                    "group",
                    groups);
            y = m.node(
                    "BatchNormalization",
                    new String[] {
                        y,
                        m.uniform(p + ".bn.gamma", seed++, 0.5, 1.0, cout),
                        w(p + ".bn.beta", 0.1, cout),
                        w(p + ".bn.mean", 0.1, cout),
                        m.uniform(p + ".bn.var", seed++, 0.5, 1.5, cout)
                    },
                    p + ".bn",
                    "epsilon",
                    1e-5);
            if (act == null) return y;
            if (act.equals("Relu")) return m.node("Relu", new String[] {y}, p + ".relu");
            return m.node(
                    "Clip",
                    new String[] {y, m.floats(p + ".lo", new float[] {0f}), m.floats(p + ".hi", new float[] {6f})},
                    p + ".relu6");
        }

        /**
         * x @ W + b with W [in, out] (PyTorch exports Linear on 3-D inputs as MatMul + Add); with {@link
         * #dynamicInt8}, the MatMul quantised dynamically (see {@link OnnxZoo#dynamicQuantizedBertLayer}).
         */
        String linear(String p, String x, long in, long out) {
            if (!dynamicInt8) {
                String y =
                        m.node("MatMul", new String[] {x, w(p + ".weight", Math.sqrt(3.0 / in), in, out)}, p + ".mm");
                return m.node("Add", new String[] {y, w(p + ".bias", 0.1, out)}, p);
            }
            String[] q = {x + "_quantized", x + "_scale", x + "_zero_point"};
            if (!quantized.contains(x)) { // one DynamicQuantizeLinear per input, shared by the q, k, v projections
                m.node("DynamicQuantizeLinear", new String[] {x}, q);
                quantized.add(x);
            }
            String wq = m.randomInts(p + ".weight_quantized", DType.INT8, seed++, -63, 63, in, out);
            String wz = m.ints(p + ".weight_zero_point", DType.INT8, new long[] {0});
            String acc = m.node("MatMulInteger", new String[] {q[0], wq, q[2], wz}, p + ".mm_quant");
            String ws = m.floats(p + ".weight_scale", new float[] {(float) (Math.sqrt(3.0 / in) / 63)});
            String scale = m.node("Mul", new String[] {q[1], ws}, p + ".scale");
            String f = m.node("Cast", new String[] {acc}, p + ".mm_f", "to", (long) TensorProto.DataType.FLOAT_VALUE);
            String y = m.node("Mul", new String[] {f, scale}, p + ".mm");
            return m.node("Add", new String[] {y, w(p + ".bias", 0.1, out)}, p);
        }

        String layerNorm(String p, String x, long dim) {
            String gamma = m.uniform(p + ".gamma", seed++, 0.5, 1.5, dim), beta = w(p + ".beta", 0.1, dim);
            if (opset >= 17)
                return m.node("LayerNormalization", new String[] {x, gamma, beta}, p, "axis", -1L, "epsilon", 1e-12);
            String mean = reduceMean(p + ".mean", x);
            String d = m.node("Sub", new String[] {x, mean}, p + ".centered");
            String var = reduceMean(
                    p + ".var", m.node("Pow", new String[] {d, m.floats(p + ".two", new float[] {2f})}, p + ".sq"));
            String std = m.node(
                    "Sqrt",
                    new String[] {
                        m.node("Add", new String[] {var, m.floats(p + ".eps", new float[] {1e-12f})}, p + ".vareps")
                    },
                    p + ".std");
            String y = m.node("Div", new String[] {d, std}, p + ".normed");
            return m.node("Add", new String[] {m.node("Mul", new String[] {y, gamma}, p + ".scaled"), beta}, p);
        }

        String reduceMean(String out, String x) {
            if (opset >= 18)
                return m.node("ReduceMean", new String[] {x, m.longs(out + ".axes", -1)}, out, "keepdims", 1L);
            return m.node("ReduceMean", new String[] {x}, out, "axes", new long[] {-1}, "keepdims", 1L);
        }
    }
}
