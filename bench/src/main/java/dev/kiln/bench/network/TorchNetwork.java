package dev.kiln.bench.network;

import dev.kiln.bench.network.TorchSlots.Form;
import dev.kiln.graph.Graph;
import dev.kiln.graph.Node;
import dev.kiln.graph.Op;
import dev.kiln.graph.ReferenceExecutor;
import dev.kiln.graph.Value;
import dev.kiln.graph.pass.GraphPasses;
import dev.kiln.ir.KilnException;
import dev.kiln.runtime.NDArray;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import org.bytedeco.javacpp.PointerScope;
import org.bytedeco.pytorch.InferenceMode;
import org.bytedeco.pytorch.LongOptional;
import org.bytedeco.pytorch.NoGradGuard;
import org.bytedeco.pytorch.Scalar;
import org.bytedeco.pytorch.ScalarOptional;
import org.bytedeco.pytorch.ScalarTypeOptional;
import org.bytedeco.pytorch.Tensor;
import org.bytedeco.pytorch.TensorOptional;
import org.bytedeco.pytorch.TensorVector;
import org.bytedeco.pytorch.global.torch;

/**
 * A Kiln {@link Graph} run as PyTorch eager calls (libtorch 2.10 CPU through
 * {@code org.bytedeco:pytorch}, the functional API of {@code org.bytedeco.pytorch.global.torch}),
 * with the same weights, copied from the graph's constants once at load time: the PyTorch
 * baseline of the network benchmark ({@link NetworkBench}).
 *
 * <pre>{@code
 * try (TorchNetwork pt = TorchNetwork.load(Models.resnet18(1, 64, 8, 10, 7), Variant.AS_BUILT)) {
 *     NDArray logits = pt.run(image).getFirst();
 * }
 * }</pre>
 *
 * <p><b>What PyTorch is given, to be fair to it.</b> Each op is the call a PyTorch model would make
 * ({@code conv2d}, {@code batch_norm}, {@code linear}, {@code max_pool2d},
 * {@code adaptive_avg_pool2d}, {@code hardtanh} for ReLU6, {@code layer_norm}, {@code matmul},
 * {@code softmax}, ...), under {@link InferenceMode}. Four-dimensional activations of the NHWC
 * graph are held as PyTorch NCHW tensors, so convolutions and pools take oneDNN's path; a conv's
 * HWIO weight is turned into OIHW once at load. The tensor memory format is {@link Format}: the
 * default is {@link Format#CHANNELS_LAST} (NCHW sizes with NHWC strides; conv weights too, as
 * {@code model.to(memory_format=torch.channels_last)} does): PyTorch's CPU conv dispatch sends every
 * channels_last conv to oneDNN, which reads NHWC without reordering activations, while a contiguous
 * NCHW conv at batch 1 goes to oneDNN only when its heuristics say the input is large enough and
 * otherwise to im2col + OpenBLAS (the NNPACK warnings libtorch prints come from that choice). The
 * NHWC input is also taken as it is. {@link Format#NCHW} (contiguous) is the other choice; the
 * default was chosen on these grounds, not yet on a measurement: {@code ./kiln network-bench
 * --torch-formats channels_last,nchw} times both, to be run in a quiet window (keep the faster). What PyTorch modules
 * do themselves is done too: a conv or dense followed by a bias add becomes one call with a bias (as {@code nn.Conv2d}
 * /
 * {@code nn.Linear} with {@code bias=True}), and ReLU, ReLU6 and a residual add write in place when
 * nothing else reads their input (torchvision's {@code inplace=True} and {@code out += identity}).
 * Nothing else is folded: batch norm stays a {@code batch_norm} call in {@link Variant#AS_BUILT};
 * {@link Variant#BN_FOLDED} runs {@link GraphPasses#optimize} first, so PyTorch gets the same folded
 * weights Kiln compiles (networks-notes §7 "fair comparison": report both). Convs, batch norms and pools are
 * translated by {@link TorchConvLayers}, the other ops here.
 *
 * <p>A reshape, transpose or output of a value held as NCHW first goes back to the NHWC order the
 * Kiln graph means (a view; the reshape copies when it must), so every result equals the
 * {@link ReferenceExecutor}'s.
 *
 * <p><b>Threads.</b> {@link TorchRuntime#setThreads} sets libtorch's intra-op pool
 * ({@code torch.set_num_threads}, which is OpenMP here: oneDNN convs and elementwise kernels) and
 * OpenBLAS's own pthread pool ({@code blas_set_num_threads}; libtorch's matmul and linear land in
 * OpenBLAS). Both can be changed in-process. What cannot: the OpenMP runtime's settings read once
 * at start ({@code OMP_NUM_THREADS} for the first pool, {@code OMP_PROC_BIND}/{@code GOMP_SPINCOUNT}
 * for spinning and binding), OpenBLAS's kernel choice ({@code OPENBLAS_CORETYPE}, read when the
 * library loads: on AVX-512 machines it detects Haswell, AVX2, unless told SkylakeX), and the
 * threads a pool already started. So honest 1- and 2-thread numbers come from one JVM per thread
 * count started with those variables set, which {@link NetworkBench} does.
 *
 * <p>Not thread-safe: one thread runs a network at a time. Tensors made during a run are freed at
 * its end ({@link PointerScope}); the weights with {@link #close()}.
 */
public final class TorchNetwork implements AutoCloseable {

    /** The graph as built (batch norm as PyTorch runs it) or with batch norm folded into the convs first. */
    public enum Variant {
        AS_BUILT("pytorch"),
        BN_FOLDED("pytorch-bn-folded");

        private final String label;

        Variant(String label) {
            this.label = label;
        }

        /** The column name in benchmark tables. */
        public String label() {
            return label;
        }
    }

    /** The memory format of 4-D activations and conv weights. */
    public enum Format {
        NCHW,
        CHANNELS_LAST;

        /** The format named on a command line: channels_last (cl, nhwc) or nchw (contiguous). */
        public static Format parse(String s) {
            return switch (s.toLowerCase(Locale.ROOT).replace('-', '_')) {
                case "channels_last", "cl", "nhwc" -> CHANNELS_LAST;
                case "nchw", "contiguous" -> NCHW;
                default ->
                    throw new KilnException(
                            "--torch-formats: unknown format '" + s + "' (channels_last, nchw or none)");
            };
        }
    }

    /** Logical (NHWC) axis a lives on axis NHWC_AXIS[a] of the NCHW tensor. */
    private static final int[] NHWC_AXIS = {0, 2, 3, 1};

    private final Graph graph;
    private final Variant variant;
    private final Format format;
    private final boolean bfloat16; // every constant and the input in bfloat16
    private final TorchConstants constants; // weights and other constants, freed on close
    private final TorchSlots slots; // which slot holds each value in which form, and the steps of a run
    private final TorchConvLayers layers; // convs, batch norms and pools; which bias_adds joined the call before them
    private final int[] inputSlots;
    private final int[] outputSlots;
    private boolean closed;

    private TorchNetwork(Graph graph, Variant variant, Format format, boolean bfloat16) {
        this.graph = graph;
        this.variant = variant;
        this.format = format;
        this.bfloat16 = bfloat16;
        this.constants =
                new TorchConstants(graph, format, bfloat16 ? torch.ScalarType.BFloat16 : torch.ScalarType.Float);
        this.slots = new TorchSlots(graph, format, constants);
        this.layers = new TorchConvLayers(graph, format, constants, slots);
        inputSlots = new int[graph.inputs().size()];
        try (NoGradGuard ng = new NoGradGuard()) {
            for (int i = 0; i < inputSlots.length; i++) {
                Value v = graph.inputs().get(i);
                TorchConstants.requireFloat(v);
                inputSlots[i] = slots.input(v.name());
            }
            for (Node n : graph.nodes()) translate(n);
            outputSlots = new int[graph.outputs().size()];
            for (int i = 0; i < outputSlots.length; i++) {
                String o = graph.outputs().get(i);
                if (graph.isConstant(o))
                    throw new KilnException(
                            "TorchNetwork: graph '" + graph.name() + "' outputs the constant '" + o + "'");
                int s = slots.slot(o, Form.LOGICAL);
                int out = slots.newSlot(o, null);
                slots.add(
                        bfloat16
                                ? t -> t[out] = t[s].to(torch.ScalarType.Float).contiguous()
                                : t -> t[out] = t[s].contiguous());
                outputSlots[i] = out;
            }
        }
    }

    /** {@code g} translated for PyTorch in the default format ({@link Format#CHANNELS_LAST}). */
    public static TorchNetwork load(Graph g, Variant variant) {
        return load(g, variant, Format.CHANNELS_LAST);
    }

    /** {@code g} (or, for {@link Variant#BN_FOLDED}, {@code GraphPasses.optimize(g)}) translated for PyTorch. */
    public static TorchNetwork load(Graph g, Variant variant, Format format) {
        return load(g, variant, format, false);
    }

    /**
     * The same, run in bfloat16 when {@code bfloat16}: every constant (weights, biases, batch-norm statistics)
     * converted to bfloat16 once and the input at each run, so every op computes in bfloat16 (oneDNN's bf16 convs
     * and matmuls on a CPU with AVX-512 BF16 or AMX), as {@code model.to(torch.bfloat16)} runs a model; the outputs
     * come back as float32.
     */
    public static TorchNetwork load(Graph g, Variant variant, Format format, boolean bfloat16) {
        TorchRuntime.ensureAvailable();
        return new TorchNetwork(variant == Variant.BN_FOLDED ? GraphPasses.optimize(g) : g, variant, format, bfloat16);
    }

    /** Whether this network runs in bfloat16 ({@link #load(Graph, Variant, Format, boolean)}). */
    public boolean bfloat16() {
        return bfloat16;
    }

    /** The graph PyTorch runs (the optimised one for {@link Variant#BN_FOLDED}). */
    public Graph graph() {
        return graph;
    }

    public Variant variant() {
        return variant;
    }

    public Format format() {
        return format;
    }

    /**
     * The convs this channels_last network runs on contiguous NCHW copies because libtorch's oneDNN would crash on them
     * ({@link TorchRuntime#oneDnn37Brgemm1x1Fpe}); empty otherwise.
     */
    public List<String> sidestepped() {
        return layers.sidestepped();
    }

    /**
     * Runs the network on {@code inputs} (in the order of {@link Graph#inputs()}, float32, NHWC as
     * the graph says) under {@link InferenceMode} on the calling thread; returns the outputs as fresh
     * compact arrays the caller closes. The copies in and out are part of the call (and of the time
     * a benchmark measures; they are a few hundred KB at most for the zoo's networks).
     */
    public List<NDArray> run(NDArray... inputs) {
        if (closed) throw new KilnException("TorchNetwork for '" + graph.name() + "' is closed");
        ReferenceExecutor.checkInputs(graph, inputs);
        try (PointerScope scope = new PointerScope();
                InferenceMode im = new InferenceMode()) {
            Tensor[] t = new Tensor[slots.count()];
            for (int i = 0; i < inputs.length; i++) {
                Tensor x = TorchTensors.toTorch(inputs[i]);
                t[inputSlots[i]] = bfloat16 ? x.to(torch.ScalarType.BFloat16) : x;
            }
            slots.run(t);
            List<NDArray> outs = new ArrayList<>();
            for (int i = 0; i < outputSlots.length; i++) {
                outs.add(TorchTensors.toKiln(
                        t[outputSlots[i]], graph.outputValues().get(i).dims()));
            }
            return outs;
        }
    }

    /** Frees the weights. */
    @Override
    public void close() {
        if (closed) return;
        closed = true;
        constants.close();
    }

    // ---- translation --------------------------------------------------------------------------

    private void translate(Node n) {
        if (layers.fusedAway(n.name())) return;
        String out = n.name();
        List<String> in = n.inputs();
        int rank = n.output().shape().size();
        switch (n.op()) {
            case Op.Conv2d c -> layers.conv2d(n, c);
            case Op.Dense d -> {
                int x = slots.slot(in.get(0), Form.LOGICAL);
                if (graph.isConstant(in.get(1))) {
                    String bias = layers.fusibleBias(n, 1);
                    Tensor w = constants.asIs(in.get(1));
                    TensorOptional b = constants.keep(
                            bias == null ? new TensorOptional() : new TensorOptional(constants.asIs(bias)));
                    slots.emit(bias == null ? out : layers.biasNodeOf(n), Form.LOGICAL, t -> torch.linear(t[x], w, b));
                } else {
                    int ws = slots.slot(in.get(1), Form.LOGICAL);
                    slots.emit(out, Form.LOGICAL, t -> torch.linear(t[x], t[ws]));
                }
            }
            case Op.BatchMatmul m -> {
                int a = slots.slot(in.get(0), Form.LOGICAL);
                int b = slots.slot(in.get(1), Form.LOGICAL);
                boolean ta = m.transposeA(), tb = m.transposeB();
                slots.emit(
                        out,
                        Form.LOGICAL,
                        t -> torch.matmul(ta ? t[a].transpose(-2, -1) : t[a], tb ? t[b].transpose(-2, -1) : t[b]));
            }
            case Op.MaxPool2d p -> layers.maxPool2d(n, p);
            case Op.AvgPool2d p -> layers.avgPool2d(n, p);
            case Op.GlobalAvgPool2d p -> layers.globalAvgPool2d(n, p);
            case Op.Mean m -> {
                int inRank = graph.value(in.get(0)).shape().size();
                boolean nchw = inRank == 4 && m.keepdims() && slots.has(in.get(0), Form.NCHW);
                Form f = nchw ? Form.NCHW : Form.LOGICAL;
                long[] axes = m.axes().stream()
                        .mapToLong(a -> {
                            int ax = a < 0 ? a + inRank : a;
                            return nchw ? NHWC_AXIS[ax] : ax;
                        })
                        .toArray();
                int x = slots.slot(in.get(0), f);
                boolean keep = m.keepdims();
                slots.emit(out, f, t -> torch.mean(t[x], axes, keep, new ScalarTypeOptional()));
            }
            case Op.Softmax s -> {
                boolean nchw = rank == 4 && slots.has(in.get(0), Form.NCHW);
                int ax = s.axis() < 0 ? s.axis() + rank : s.axis();
                long axis = nchw ? NHWC_AXIS[ax] : ax;
                Form f = nchw ? Form.NCHW : Form.LOGICAL;
                int x = slots.slot(in.get(0), f);
                slots.emit(out, f, t -> torch.softmax(t[x], axis));
            }
            case Op.LayerNorm l -> {
                int x = slots.slot(in.get(0), Form.LOGICAL);
                long[] shape = n.output().dims();
                long[] normalized = Arrays.copyOfRange(shape, shape.length - l.axes(), shape.length);
                TensorOptional g = slots.optionalOperand(in.get(1), normalized);
                TensorOptional b = slots.optionalOperand(in.get(2), normalized);
                double eps = l.epsilon();
                slots.emit(out, Form.LOGICAL, t -> torch.layer_norm(t[x], normalized, g, b, eps, true));
            }
            case Op.BatchNorm b -> layers.batchNorm(n, b);
            case Op.BiasAdd b -> {
                int ax = b.axis() < 0 ? b.axis() + rank : b.axis();
                boolean nchw = rank == 4 && slots.has(in.get(0), Form.NCHW);
                Form f = nchw ? Form.NCHW : Form.LOGICAL;
                int tAxis = nchw ? NHWC_AXIS[ax] : ax;
                int x = slots.slot(in.get(0), f);
                long[] view = new long[rank];
                Arrays.fill(view, 1);
                view[tAxis] = n.output().shape().get(ax);
                int bs = slots.operand(in.get(1), view);
                slots.emit(out, f, t -> torch.add(t[x], t[bs]));
            }
            case Op.Binary b -> binary(n, b);
            case Op.Unary u -> {
                Form f = slots.formOf(in.get(0));
                int x = slots.slot(in.get(0), f);
                boolean inPlace = u.op() == Op.UnaryKind.RELU && canWriteInPlace(in.get(0), n);
                slots.emit(
                        out,
                        f,
                        switch (u.op()) {
                            case RELU -> inPlace ? t -> t[x].relu_() : t -> torch.relu(t[x]);
                            case SIGMOID -> t -> torch.sigmoid(t[x]);
                            case TANH -> t -> torch.tanh(t[x]);
                            case GELU -> t -> torch.gelu(t[x], "none");
                            case GELU_TANH -> t -> torch.gelu(t[x], "tanh");
                            case ERF -> t -> torch.erf(t[x]);
                            case SQRT -> t -> torch.sqrt(t[x]);
                            case NOT -> t -> torch.logical_not(t[x]);
                        });
            }
            case Op.Clip c -> {
                Form f = slots.formOf(in.get(0));
                int x = slots.slot(in.get(0), f);
                Scalar lo = constants.keep(new Scalar(c.lo())), hi = constants.keep(new Scalar(c.hi()));
                if (canWriteInPlace(in.get(0), n)) {
                    ScalarOptional l = constants.keep(new ScalarOptional(lo)),
                            h = constants.keep(new ScalarOptional(hi));
                    slots.emit(out, f, t -> t[x].clamp_(l, h));
                } else {
                    slots.emit(out, f, t -> torch.hardtanh(t[x], lo, hi));
                }
            }
            case Op.Reshape r -> {
                int x = slots.slot(in.get(0), Form.LOGICAL);
                long[] shape = n.output().dims();
                slots.emit(out, Form.LOGICAL, t -> t[x].reshape(shape));
            }
            case Op.Transpose tr -> {
                boolean nchw = slots.has(in.get(0), Form.NCHW) && !slots.has(in.get(0), Form.LOGICAL);
                long[] perm = new long[tr.perm().size()];
                for (int d = 0; d < perm.length; d++) {
                    int q = tr.perm().get(d);
                    perm[d] = nchw ? NHWC_AXIS[q] : q;
                }
                int x = slots.slot(in.get(0), nchw ? Form.NCHW : Form.LOGICAL);
                slots.emit(out, Form.LOGICAL, t -> t[x].permute(perm));
            }
            case Op.StridedSlice sl -> {
                int x = slots.slot(in.get(0), Form.LOGICAL);
                int r = sl.begin().size();
                LongOptional[] starts = new LongOptional[r], ends = new LongOptional[r];
                for (int d = 0; d < r; d++) {
                    long b = sl.begin().get(d), st = sl.step().get(d);
                    if (st < 1)
                        throw new KilnException("node '" + out
                                + "': the PyTorch baseline takes strided slices with positive steps only, got "
                                + sl.step());
                    starts[d] = constants.keep(new LongOptional(b));
                    ends[d] = constants.keep(new LongOptional(b + (sl.size().get(d) - 1) * st + 1));
                }
                slots.emit(out, Form.LOGICAL, t -> {
                    Tensor v = t[x];
                    for (int d = 0; d < r; d++)
                        v = v.slice(d, starts[d], ends[d], sl.step().get(d));
                    return v;
                });
            }
            case Op.Concat c -> {
                int ax = c.axis() < 0 ? c.axis() + rank : c.axis();
                boolean nchw = rank == 4 && in.stream().allMatch(v -> slots.has(v, Form.NCHW) || graph.isConstant(v));
                Form f = nchw ? Form.NCHW : Form.LOGICAL;
                long axis = nchw ? NHWC_AXIS[ax] : ax;
                int[] xs = in.stream()
                        .mapToInt(v -> graph.isConstant(v) ? slots.operandSlot(v, f) : slots.slot(v, f))
                        .toArray();
                slots.emit(out, f, t -> {
                    TensorVector tv = new TensorVector();
                    for (int s : xs) tv.push_back(t[s]);
                    return torch.cat(tv, axis);
                });
            }
            case Op.Cast _,
                    Op.Quantize _,
                    Op.DynamicQuantParams _,
                    Op.Dequantize _,
                    Op.Requantize _,
                    Op.DenseInteger _,
                    Op.MatmulPacked _,
                    Op.Conv2dPacked _,
                    Op.Conv2dWinograd _,
                    Op.Conv2dGemm _,
                    Op.Take _,
                    Op.Where _,
                    Op.BroadcastTo _,
                    Op.PoolNd _,
                    Op.GlobalPool _,
                    Op.ConvNd _ ->
                throw new KilnException("node '" + out + "' (" + n.op().kind()
                        + "): the PyTorch baseline does not translate this op (integer ops, selections, "
                        + "asymmetric, dilated, 1-D/3-D and global max pools, 1-D/3-D and transposed convolutions)");
        }
    }

    private void binary(Node n, Op.Binary b) {
        List<String> in = n.inputs();
        int rank = n.output().shape().size();
        boolean nchw = rank == 4 && in.stream().anyMatch(v -> !graph.isConstant(v) && slots.has(v, Form.NCHW));
        Form f = nchw ? Form.NCHW : Form.LOGICAL;
        int[] xs = new int[2];
        for (int i = 0; i < 2; i++) xs[i] = slots.operandSlot(in.get(i), f);
        int a = xs[0], c = xs[1];
        boolean sameShapeA = graph.value(in.get(0)).shape().equals(n.output().shape());
        if (b.op() == Op.BinaryKind.ADD
                && sameShapeA
                && slots.formOf(in.get(0)) == f
                && canWriteInPlace(in.get(0), n)
                && !in.get(0).equals(in.get(1))) {
            slots.emit(n.name(), f, t -> t[a].add_(t[c]));
            return;
        }
        slots.emit(
                n.name(),
                f,
                switch (b.op()) {
                    case ADD -> t -> torch.add(t[a], t[c]);
                    case SUBTRACT -> t -> torch.sub(t[a], t[c]);
                    case MULTIPLY -> t -> torch.mul(t[a], t[c]);
                    case DIVIDE -> t -> torch.div(t[a], t[c]);
                    case MAXIMUM -> t -> torch.maximum(t[a], t[c]);
                    case MINIMUM -> t -> torch.minimum(t[a], t[c]);
                    case POWER -> t -> torch.pow(t[a], t[c]);
                    case EQUAL -> t -> torch.eq(t[a], t[c]);
                    case LESS -> t -> torch.lt(t[a], t[c]);
                    case LESS_EQUAL -> t -> torch.le(t[a], t[c]);
                    case GREATER -> t -> torch.gt(t[a], t[c]);
                    case GREATER_EQUAL -> t -> torch.ge(t[a], t[c]);
                    case AND -> t -> torch.logical_and(t[a], t[c]);
                    case OR -> t -> torch.logical_or(t[a], t[c]);
                    case XOR -> t -> torch.logical_xor(t[a], t[c]);
                });
    }

    /** Whether {@code n} may overwrite {@code v}'s tensor: a fresh result of a node that nobody else reads. */
    private boolean canWriteInPlace(String v, Node n) {
        if (graph.isConstant(v) || graph.isInput(v) || graph.isOutput(v)) return false;
        if (graph.consumers(v).size() != 1 || graph.consumers(v).getFirst() != n) return false;
        Node p = graph.producer(v);
        if (p == null || p.op() instanceof Op.Reshape || p.op() instanceof Op.Transpose) return false;
        return slots.heldOnce(v);
    }

    @Override
    public String toString() {
        return String.format(
                Locale.ROOT,
                "TorchNetwork(%s, %s, %s, %d steps)",
                graph.name(),
                variant.label(),
                format,
                slots.steps());
    }
}
