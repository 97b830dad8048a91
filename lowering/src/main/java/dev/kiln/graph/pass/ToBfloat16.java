package dev.kiln.graph.pass;

import dev.kiln.graph.Graph;
import dev.kiln.graph.GraphBuilder;
import dev.kiln.graph.Node;
import dev.kiln.graph.Op;
import dev.kiln.graph.Value;
import dev.kiln.ir.DType;
import dev.kiln.nn.LowPrecision;
import dev.kiln.runtime.NDArray;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Mixed precision with bfloat16 weights, as PyTorch's CPU autocast and oneDNN run a float32 model in bfloat16: every
 * convolution and dense layer that the AVX-512 BF16 (and AMX) instructions can take computes on bfloat16 operands
 * with float32 sums, its constant weight stored once in bfloat16 (half the bytes) and packed in the instructions'
 * layout ({@link LowPrecision#packConv2dWeight}, {@link LowPrecision#packDenseWeight}: 16 output channels' pairs of
 * reduction elements adjacent), its input activation cast to bfloat16 where it is read. Everything else (biases,
 * activations, pooling, softmax, normalisation, the values between layers) stays float32, so each layer's output is
 * the float32 sum of bfloat16-rounded products, and the epilogues fuse with it as before.
 *
 * <p>Converted: a one-group, undilated NHWC {@code conv2d} with one stride for both axes and a constant float32 HWIO
 * weight, becoming {@code conv2d_packed} (its input's channels padded to an even count, the extra weights 0); a
 * {@code dense} of a 2-D float32 input and a constant float32 weight, becoming {@code matmul_packed} (an odd K padded
 * likewise). Their output channels are computed in blocks of 16: where their count is not a multiple of 16 the
 * extra channels' weights are 0 and a {@code strided_slice} keeps the first ones (a MobileNet's 24-channel
 * projections, a 1000-class classifier). Every other convolution or dense layer stays float32, and
 * {@link Result#kept()} says which and why (a depthwise convolution, say, has no reduction over channels for the
 * instructions to take). Run it on the graph as written: it first runs {@link GraphPasses#optimize}, so batch norms
 * are folded into the float32 weights before they are rounded.
 */
public final class ToBfloat16 {
    private ToBfloat16() {}

    /**
     * The converted graph, the names of the layers it converted, and each layer left in float32 with the reason.
     */
    public record Result(Graph graph, List<String> converted, Map<String, String> kept) {
        public Result {
            converted = List.copyOf(converted);
            kept = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(kept));
        }
    }

    /** Where the values read by converted layers are kept between kernels. */
    public enum Activations {
        /**
         * float32, as computed (the default): each converted layer's input is rounded to bfloat16 where the layer
         * reads it, by a cast that is a kernel of its own wherever the value has other readers (a residual block's
         * output, read by the next block's first conv and by its residual add); every float32 reader reads the
         * float32 value.
         */
        FLOAT32,
        /**
         * bfloat16, as PyTorch's autocast and oneDNN keep them: a value that a converted layer reads is rounded once,
         * where it is computed (the cast fused into the kernel that computes it), and stored only in bfloat16; every
         * float32 reader widens it (exactly) where it reads it, in its own kernel (a residual add as its epilogue's
         * operand). No cast kernels, and half the bytes for the residual connections; the residual stream carries
         * bfloat16's rounding from block to block. Graph inputs and outputs stay float32.
         */
        BFLOAT16
    }

    /** {@link #apply(Graph, Activations)} with float32 values between layers ({@link Activations#FLOAT32}). */
    public static Result apply(Graph graph) {
        return apply(graph, Activations.FLOAT32);
    }

    /**
     * The graph with its convertible convolutions and dense layers in bfloat16, the values they read kept as
     * {@code activations} says.
     */
    public static Result apply(Graph graph, Activations activations) {
        Graph g = GraphPasses.optimize(graph);
        GraphEditor e = new GraphEditor(g);
        Map<String, String> casts = new LinkedHashMap<>(); // float32 activation -> its bfloat16 cast
        Map<String, String> packed = new HashMap<>(); // float32 weight -> its packed bfloat16 constant
        List<String> converted = new ArrayList<>();
        Map<String, String> kept = new LinkedHashMap<>();
        List<Node> out = new ArrayList<>();
        for (Node n : e.nodes) {
            String why =
                    switch (n.op()) {
                        case Op.Conv2d c -> convReason(g, n, c);
                        case Op.Dense d -> denseReason(g, n);
                        case Op.BatchMatmul m -> batchMatmulReason(g, n, m);
                        default -> "";
                    };
            if (why == null && n.op() instanceof Op.BatchMatmul m) {
                // both operands activations: each cast to bfloat16 where it is read, the sums float32; the task's
                // DotProductLayout packs the right operand in the kernel for the dot-product instructions
                List<String> ins = new ArrayList<>();
                for (String v : n.inputs()) ins.add(castOf(g, v, casts, out, e));
                out.add(new Node(new Op.BatchMatmul(false, m.transposeB(), DType.FLOAT32), ins, n.output()));
                converted.add(n.name());
                continue;
            }
            if (why == null) {
                String x = n.inputs().get(0), w = n.inputs().get(1);
                String xb = castOf(g, x, casts, out, e);
                boolean conv = n.op() instanceof Op.Conv2d;
                String wp = packed.get(w);
                if (wp == null) {
                    NDArray p = conv ? packConv(g.constant(w)) : packDense(g.constant(w));
                    wp = e.freshName(w + ".bf16_packed");
                    e.constants.put(wp, p);
                    packed.put(w, wp);
                }
                Op op = n.op() instanceof Op.Conv2d c
                        ? new Op.Conv2dPacked(c.strides().get(0), c.pads(), 0)
                        : new Op.MatmulPacked();
                List<Long> shape = n.output().shape();
                long channels = shape.getLast(), padded = roundUp(channels, LowPrecision.LANES);
                if (padded == channels) {
                    out.add(new Node(op, List.of(xb, wp), n.output()));
                } else {
                    // the packed op computes whole blocks of 16 channels (the extra weights 0); the first ones are kept
                    List<Long> wide = new ArrayList<>(shape);
                    wide.set(wide.size() - 1, padded);
                    String p = e.freshName(n.name() + ".padded");
                    out.add(new Node(op, List.of(xb, wp), new Value(p, DType.FLOAT32, wide)));
                    List<Long> zeros = new ArrayList<>(), ones = new ArrayList<>();
                    for (int d = 0; d < shape.size(); d++) {
                        zeros.add(0L);
                        ones.add(1L);
                    }
                    out.add(new Node(new Op.StridedSlice(zeros, ones, shape), List.of(p), n.output()));
                }
                converted.add(n.name());
            } else {
                if (!why.isEmpty()) kept.put(n.name(), why);
                out.add(n);
            }
        }
        if (activations == Activations.BFLOAT16) {
            for (Map.Entry<String, String> c : casts.entrySet()) storeNarrow(g, out, c.getKey(), c.getValue(), e);
        }
        e.nodes.clear();
        e.nodes.addAll(out);
        return new Result(e.build(), converted, kept);
    }

    /**
     * Keeps {@code x} in bfloat16 only ({@link Activations#BFLOAT16}): its cast {@code xb} moves to just after
     * {@code x}'s producer (its only reader now, so the producer's kernel writes the bfloat16 value), and every other
     * reader of {@code x} reads a widening cast of {@code xb} of its own, placed just before it, which joins the
     * reader's kernel (an epilogue's operand, a conv's prologue, a light op's inlined producer). A graph input or
     * output, or a value no float32 node reads, is left as it is.
     */
    private static void storeNarrow(Graph g, List<Node> out, String x, String xb, GraphEditor e) {
        if (g.outputs().contains(x) || g.isConstant(x)) return;
        int producer = -1, cast = -1;
        for (int i = 0; i < out.size(); i++) {
            Node n = out.get(i);
            if (n.name().equals(x)) producer = i;
            if (n.name().equals(xb)) cast = i;
        }
        if (producer < 0 || cast < 0) return; // a graph input
        Node castNode = out.remove(cast);
        if (cast < producer) producer--;
        out.add(producer + 1, castNode);
        List<Node> tail = new ArrayList<>(out.subList(producer + 2, out.size()));
        out.subList(producer + 2, out.size()).clear();
        for (Node r : tail) out.add(e.widenedReader(r, Map.of(x, xb), out));
    }

    /**
     * Convolutions with fewer input channels stay float32: an RGB image's first layer, whose bfloat16 dot products
     * reduce over 2 pairs per tap, one of them half padding. Converted, ResNet-50's 7x7 stem ran 0.63 ms against
     * float32's 0.61 in the same 200 s network tune (docs/PERFORMANCE.md), and its input needs a cast kernel of its
     * own. (Its tensorized programs once failed to compile: {@code SkipPaddedTerms} narrowed the pair loop inside the
     * tensorized nest to the one real channel of the second pair; fixed, the verifier's tensorized-nest rule checks
     * it.)
     */
    static final long MIN_CHANNELS = 8;

    private static long roundUp(long v, long m) {
        return (v + m - 1) / m * m;
    }

    /** Null where the convolution converts, else why it stays float32. */
    private static String convReason(Graph g, Node n, Op.Conv2d c) {
        if (!c.layout().equals("NHWC")) return "layout " + c.layout() + ", not NHWC";
        if (c.groups() != 1) return c.groups() + " groups (bfloat16 dot products reduce over one group's channels)";
        if (!c.dilations().equals(List.of(1L, 1L))) return "dilations " + c.dilations();
        if (!c.strides().get(0).equals(c.strides().get(1))) return "strides " + c.strides() + " differ";
        String common = operands(g, n, 4);
        if (common != null) return common;
        long ci = g.constant(n.inputs().get(1)).shape()[2];
        if (ci < MIN_CHANNELS) {
            return ci + " input channels, fewer than " + MIN_CHANNELS
                    + " (an image's first layer stays float32: its dot products would be two pairs deep, one half"
                    + " padding, and ran no faster than float32's)";
        }
        return null;
    }

    /** The bfloat16 cast of activation {@code x}: the one made before, or a new cast node added to {@code out}. */
    private static String castOf(Graph g, String x, Map<String, String> casts, List<Node> out, GraphEditor e) {
        String xb = casts.get(x);
        if (xb == null) {
            xb = e.freshName(x + ".bf16");
            out.add(new Node(
                    new Op.Cast(DType.BFLOAT16),
                    List.of(x),
                    new Value(xb, DType.BFLOAT16, g.value(x).shape())));
            casts.put(x, xb);
        }
        return xb;
    }

    /**
     * Null where a batched matmul converts (attention's products: two float32 activations of one batch, the left one
     * read as {@code [B, M, K]}, an even K), else why it stays float32.
     */
    private static String batchMatmulReason(Graph g, Node n, Op.BatchMatmul m) {
        if (m.accumulate() != null) return "it already accumulates in " + m.accumulate();
        if (m.transposeA()) return "its left operand is transposed (the instructions read it along K)";
        for (String v : n.inputs()) {
            if (g.isConstant(v)) return "operand '" + v + "' is a constant (a weight: convert it as a dense layer)";
            if (g.value(v).dtype() != DType.FLOAT32)
                return "operand '" + v + "' is " + g.value(v).dtype();
        }
        Value a = g.value(n.inputs().get(0)), b = g.value(n.inputs().get(1));
        if (!a.shape().getFirst().equals(b.shape().getFirst())) return "its operands' batches differ (one broadcast)";
        long k = a.shape().get(2);
        if (k % 2 != 0) return "its reduction of " + k + " is odd (bfloat16 dot products sum pairs)";
        return null;
    }

    /** Null where the dense layer converts, else why it stays float32. */
    private static String denseReason(Graph g, Node n) {
        if (g.value(n.inputs().get(0)).shape().size() != 2) return "its input is not 2-D";
        String common = operands(g, n, 2);
        if (common != null) return common;
        return null;
    }

    private static String operands(Graph g, Node n, int weightRank) {
        String w = n.inputs().get(1);
        if (!g.isConstant(w)) return "its weight '" + w + "' is not a constant";
        NDArray wa = g.constant(w);
        if (wa.dtype() != DType.FLOAT32 || wa.rank() != weightRank) {
            return "its weight is " + wa.dtype() + " of rank " + wa.rank() + ", not float32 of rank " + weightRank;
        }
        if (g.value(n.inputs().get(0)).dtype() != DType.FLOAT32 || n.output().dtype() != DType.FLOAT32) {
            return "its input or output is not float32";
        }
        return null;
    }

    /**
     * An HWIO float32 weight {@code [KH, KW, IC, OC]} rounded to bfloat16 and packed to {@code [OCp/16, KH, KW,
     * ICp/2, 16, 2]} (ICp: IC rounded up to even, OCp: OC up to a multiple of 16; the extra weights 0), {@link
     * LowPrecision#packConv2dWeight}'s layout.
     */
    static NDArray packConv(NDArray w) {
        long[] s = w.shape();
        long kh = s[0], kw = s[1], ic = s[2], oc = s[3];
        int g = LowPrecision.group(DType.BFLOAT16), lanes = LowPrecision.LANES;
        long icp = roundUp(ic, g);
        NDArray p = GraphBuilder.autoArray(DType.BFLOAT16, roundUp(oc, lanes) / lanes, kh, kw, icp / g, lanes, g);
        for (long r = 0; r < kh; r++)
            for (long q = 0; q < kw; q++)
                for (long c = 0; c < ic; c++)
                    for (long o = 0; o < oc; o++) {
                        double v = w.getDouble(r, q, c, o);
                        p.setDouble(v, o / lanes, r, q, c / g, o % lanes, c % g);
                    }
        return p;
    }

    /**
     * A dense float32 weight {@code [units, K]} rounded to bfloat16 and packed to {@code [units/16, Kp/2, 16, 2]}
     * (Kp: K rounded up to even, units to a multiple of 16; the extra weights 0), {@link
     * LowPrecision#packDenseWeight}'s layout.
     */
    static NDArray packDense(NDArray w) {
        long units = w.shape()[0], k = w.shape()[1];
        int g = LowPrecision.group(DType.BFLOAT16), lanes = LowPrecision.LANES;
        long kp = roundUp(k, g);
        NDArray p = GraphBuilder.autoArray(DType.BFLOAT16, roundUp(units, lanes) / lanes, kp / g, lanes, g);
        for (long u = 0; u < units; u++)
            for (long c = 0; c < k; c++) p.setDouble(w.getDouble(u, c), u / lanes, c / g, u % lanes, c % g);
        return p;
    }
}
