package dev.kiln.graph.pass;

import dev.kiln.graph.Graph;
import dev.kiln.graph.GraphBuilder;
import dev.kiln.graph.Node;
import dev.kiln.graph.Op;
import dev.kiln.graph.Value;
import dev.kiln.ir.DType;
import dev.kiln.ir.KilnException;
import dev.kiln.runtime.NDArray;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Mixed precision for a GPU's Tensor Cores: every one-group NHWC {@code conv2d} and every {@code dense} layer with a
 * constant float32 weight becomes
 * an implicit GEMM ({@link Op.Conv2dGemm}, {@code dev.kiln.nn.ConvGemm}) on float16 or bfloat16 operands with
 * float32 sums, which the Tensor Core sketch tiles onto wmma with its im2col tiles gathered from the image straight
 * into shared memory. For each such conv:
 *
 * <pre>
 * x.f16 = cast(x)                     one per activation (fused into x's producer where it is x's only reader)
 * g     = conv2d_gemm(x.f16, w.gemm)  [Mp, COp] float32: Mp = N*OH*OW and COp = CO rounded up to 16
 * e     = epilogue(g)                 the layer's bias add and activations, on the rows ([COp] bias, zero padded)
 * s     = strided_slice(e)            [N*OH*OW, CO], where Mp or COp was rounded up
 * out   = reshape(s)                  [N, OH, OW, CO], the epilogue's own output value
 * </pre>
 *
 * {@code w.gemm} is the HWIO weight rounded to the half type once, here, seen as {@code [KH*KW*C, CO]} and padded with
 * zeros to {@code [Kp, COp]} (K up to a multiple of 16). The epilogue is the chain of constant per-channel bias adds,
 * activations and clips after the layer, each the only reader of the value before it, and, where the rows are
 * exactly the layer's pixels and channels (nothing rounded up), residual adds of a float32 value of the layer's
 * shape computed before it, which the rows read through a reshape (a view): on the rows it fuses into the GEMM's
 * kernel (the Tensor Core sketch's element-wise epilogue). Where the chain's value is read only by another converted
 * layer, that layer's cast moves onto the rows too, so the GEMM's kernel writes the half-precision activation and
 * the reshape (when nothing was rounded up) is a view, no kernel: a chain of convs, or of residual blocks, runs one
 * kernel per layer. A residual add after a rounded-up layer (ResNet-50's 14x14 and 7x7 stages at batch 1: 196 and
 * 49 rows) and anything else stays float32 after the reshape, where it fuses with the slice and the reshape into
 * one element-wise kernel. Everything else stays as it was, and
 * {@link Result#kept()} says which layers and why (a depthwise conv has no reduction over channels for a GEMM).
 *
 * <p>A dense layer with a constant weight ({@code x [N, K]}, {@code w [units, K]}) is the same GEMM as a 1x1 conv of
 * a 1 x N image of K channels: {@code x} reshaped to {@code [1, 1, N, K]} (with its cast, one kernel), the weight
 * transposed to {@code [K, units]} and padded, the GEMM's first rows and columns the layer's {@code [N, units]}.
 * Batched matmuls of two activations (attention) stay float32.
 *
 * <p>On request, like {@link ToBfloat16} (TVM's ToMixedPrecision): {@code GraphPasses.optimize} runs first, so
 * batch norms fold into the float32 weights before they are rounded.
 */
public final class ToTensorCores {
    private ToTensorCores() {}

    /** The rows, reduction and output channels of a Tensor Core tile: what the GEMM's extents are rounded up to. */
    public static final long TILE = 16;

    /** The converted graph, the convolutions it converted, and each one it kept in float32 with the reason. */
    public record Result(Graph graph, List<String> converted, Map<String, String> kept) {
        public Result {
            converted = List.copyOf(converted);
            kept = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(kept));
        }
    }

    /** Where the values that converted layers read are kept between kernels. */
    public enum Activations {
        /**
         * float32 (the default): a layer's output read by a converted layer and by anything else (a residual block's
         * output, read by the next block's first conv and by its residual add) is cast to the half type in a kernel
         * of its own.
         */
        FLOAT32,
        /**
         * The half type: such a value is written in the half type only, by the GEMM kernel that computes it (its
         * cast on the rows); a residual add on another GEMM's rows reads it through a view and widens it in that
         * kernel, and every other float32 reader widens it in its own kernel. Graph inputs and outputs, and values
         * read by a dense layer (whose GEMM reads them as another shape), stay float32.
         */
        HALF
    }

    /** {@link #apply(Graph, DType, Activations)} with float32 values between layers. */
    public static Result apply(Graph graph, DType half) {
        return apply(graph, half, Activations.FLOAT32);
    }

    /**
     * The graph with its convolutions on {@code half} (float16 or bfloat16) implicit GEMMs, the values they read kept
     * as {@code activations} says.
     */
    public static Result apply(Graph graph, DType half, Activations activations) {
        if (half != DType.FLOAT16 && half != DType.BFLOAT16) {
            throw new KilnException("ToTensorCores: argument 'half' is " + half + "; float16 or bfloat16 only");
        }
        Graph g = GraphPasses.optimize(graph);
        GraphEditor e = new GraphEditor(g);
        String suffix = half == DType.FLOAT16 ? ".f16" : ".bf16";
        Map<String, String> casts = new HashMap<>();
        Map<String, String> weights = new HashMap<>();
        List<String> converted = new ArrayList<>();
        Map<String, String> kept = new LinkedHashMap<>();
        List<Node> out = new ArrayList<>();
        Map<String, String> reasons = new HashMap<>(); // every conv/dense layer: null where it converts
        for (Node n : e.nodes) {
            switch (n.op()) {
                case Op.Conv2d c -> reasons.put(n.name(), reason(g, n, c));
                case Op.Dense d -> reasons.put(n.name(), denseReason(g, n));
                default -> {}
            }
        }
        Set<String> moved = new HashSet<>(); // epilogue nodes already emitted on a GEMM's rows
        Map<String, String> narrow = new HashMap<>(); // float32 value -> its half-type copy, the only one stored
        for (Node n : e.nodes) {
            if (moved.contains(n.name())) continue;
            if (!reasons.containsKey(n.name()) || reasons.get(n.name()) != null) {
                if (reasons.get(n.name()) != null) kept.put(n.name(), reasons.get(n.name()));
                out.add(e.widenedReader(n, narrow, out));
                continue;
            }
            boolean dense = n.op() instanceof Op.Dense;
            String x = n.inputs().get(0), w = n.inputs().get(1);
            String xh = casts.get(x);
            if (xh == null) {
                List<Long> xs = inputImage(g, n);
                String src = x;
                if (dense) {
                    // [N, K] read as a 1 x N image of K channels (the reshape fuses with the cast)
                    src = e.freshName(x + ".image");
                    out.add(new Node(new Op.Reshape(xs), List.of(x), new Value(src, DType.FLOAT32, xs)));
                }
                xh = e.freshName(x + suffix);
                out.add(new Node(new Op.Cast(half), List.of(src), new Value(xh, half, xs)));
                casts.put(x, xh);
            }
            NDArray wa = g.constant(w);
            // a dense weight [units, K] is the 1x1 conv weight [1, 1, K, units]
            long[] ws = dense ? new long[] {1, 1, wa.shape()[1], wa.shape()[0]} : wa.shape();
            long k = ws[0] * ws[1] * ws[2], co = ws[3];
            long kp = roundUp(k, TILE), cop = roundUp(co, TILE);
            String wg = weights.get(w);
            if (wg == null) {
                wg = e.freshName(w + suffix + "_gemm");
                e.constants.put(wg, dense ? denseGemmWeight(wa, half, kp, cop) : gemmWeight(wa, half, kp, cop));
                weights.put(w, wg);
            }
            List<Long> shape = n.output().shape(); // [N, OH, OW, CO], or [N, units]
            long m = dense ? shape.get(0) : shape.get(0) * shape.get(1) * shape.get(2);
            long mp = roundUp(m, TILE);
            Op.Conv2dGemm op = n.op() instanceof Op.Conv2d c
                    ? new Op.Conv2dGemm(List.of(ws[0], ws[1]), c.strides(), c.pads(), c.dilations(), mp)
                    : new Op.Conv2dGemm(List.of(1L, 1L), List.of(1L, 1L), List.of(0L, 0L, 0L, 0L), List.of(1L, 1L), mp);
            String rows = e.freshName(n.name() + ".gemm");
            out.add(new Node(op, List.of(xh, wg), new Value(rows, DType.FLOAT32, List.of(mp, cop))));
            List<Long> flat = List.of(mp, cop);
            // the layer's per-channel epilogue (bias, activations) computed on the GEMM's rows, where it fuses into
            // the GEMM's kernel as the Tensor Core sketch's epilogue, instead of after the reshape
            Node last = n;
            Set<String> defined = new HashSet<>(); // what the rows' epilogue may read: computed before the layer
            for (Node d : out) defined.add(d.name());
            for (Value in : g.inputs()) defined.add(in.name());
            defined.addAll(narrow.keySet());
            for (Node r : epilogue(g, n, co, mp == m && cop == co, defined)) {
                String v = e.freshName(r.name() + ".rows");
                List<String> ins = new ArrayList<>(r.inputs());
                int at = ins.indexOf(last.output().name());
                ins.set(at, rows);
                if (r.op() instanceof Op.Binary) {
                    // a residual add: its other operand [N, OH, OW, CO] read as the rows [M, CO] (a view)
                    String other = ins.get(1 - at), seen = e.freshName(other + ".as_rows", out);
                    String stored = narrow.get(other);
                    if (stored == null) {
                        out.add(new Node(new Op.Reshape(flat), List.of(other), new Value(seen, DType.FLOAT32, flat)));
                    } else { // kept in the half type: its rows widened in this kernel, as the add's operand
                        String hr = e.freshName(stored + ".as_rows", out);
                        out.add(new Node(new Op.Reshape(flat), List.of(stored), new Value(hr, half, flat)));
                        out.add(new Node(
                                new Op.Cast(DType.FLOAT32), List.of(hr), new Value(seen, DType.FLOAT32, flat)));
                    }
                    ins.set(1 - at, seen);
                    out.add(new Node(r.op(), ins, new Value(v, DType.FLOAT32, flat)));
                } else if (r.op() instanceof Op.BiasAdd) {
                    String b = ins.get(1);
                    ins.set(1, cop == co ? b : padded(e, g, b, cop));
                    out.add(new Node(new Op.BiasAdd(1), ins, new Value(v, DType.FLOAT32, flat)));
                } else {
                    out.add(new Node(r.op(), ins, new Value(v, DType.FLOAT32, flat)));
                }
                moved.add(r.name());
                rows = v;
                last = r;
            }
            // where the only reader is a converted layer, its cast also moves onto the rows (the GEMM's kernel writes
            // the half-precision activation, and the reshape to NHWC is a view when nothing was rounded up)
            String value = last.output().name();
            List<Long> target = last.output().shape();
            DType type = DType.FLOAT32;
            List<Node> readers = g.consumers(value);
            String produced = last.output().name();
            List<Long> producedShape = last.output().shape();
            List<Node> gemmReaders = readers.stream()
                    .filter(r -> r.inputs().indexOf(produced) == 0
                            && reasons.containsKey(r.name())
                            && reasons.get(r.name()) == null)
                    .toList();
            boolean only = readers.size() == 1 && gemmReaders.size() == 1;
            boolean keepHalf = activations == Activations.HALF
                    && !gemmReaders.isEmpty()
                    && gemmReaders.stream().allMatch(r -> inputImage(g, r).equals(producedShape));
            if (!g.isOutput(value) && (only || keepHalf)) {
                String hv = e.freshName(value + suffix + ".rows");
                out.add(new Node(new Op.Cast(half), List.of(rows), new Value(hv, half, flat)));
                rows = hv;
                type = half;
                target = inputImage(g, readers.getFirst());
                value = e.freshName(value + suffix);
                casts.put(last.output().name(), value);
                if (!only) narrow.put(last.output().name(), value);
            }
            List<Long> have = flat;
            if (mp != m || cop != co) {
                String sliced = e.freshName(last.output().name() + ".sliced");
                have = List.of(m, co);
                out.add(new Node(
                        new Op.StridedSlice(List.of(0L, 0L), List.of(1L, 1L), have),
                        List.of(rows),
                        new Value(sliced, type, have)));
                rows = sliced;
            }
            if (have.equals(target)) {
                // a dense layer's [N, units]: the last node already computes it, under the layer's own name
                Node end = out.removeLast();
                out.add(new Node(end.op(), end.inputs(), new Value(value, type, target)));
            } else {
                out.add(new Node(new Op.Reshape(target), List.of(rows), new Value(value, type, target)));
            }
            converted.add(n.name());
        }
        e.nodes.clear();
        e.nodes.addAll(out);
        return new Result(e.build(), converted, kept);
    }

    /**
     * The chain after a converted layer {@code n} of {@code co} output channels that can run on the GEMM's rows: bias
     * adds of a constant {@code [co]} vector on the last axis, unary activations and clips, and, where the rows are
     * exactly the layer's pixels and channels ({@code exact}: nothing rounded up), residual adds of a float32 value
     * of the layer's shape that is {@code defined} before the layer (read as rows through a view); each node the only
     * reader of the value before it, none a graph output.
     */
    private static List<Node> epilogue(Graph g, Node n, long co, boolean exact, Set<String> defined) {
        List<Node> chain = new ArrayList<>();
        String v = n.output().name();
        List<Long> shape = n.output().shape();
        int rank = shape.size();
        while (!g.isOutput(v) && g.consumers(v).size() == 1) {
            Node r = g.consumers(v).getFirst();
            int at = r.inputs().indexOf(v);
            if (at != r.inputs().lastIndexOf(v)) break;
            if (at != 0 && !(r.op() instanceof Op.Binary)) break;
            boolean ok =
                    switch (r.op()) {
                        case Op.Binary b -> {
                            String other = r.inputs().get(1 - at);
                            Value ov = g.value(other);
                            yield exact
                                    && b.op() == Op.BinaryKind.ADD
                                    && defined.contains(other)
                                    && ov.dtype() == DType.FLOAT32
                                    && ov.shape().equals(shape);
                        }
                        case Op.BiasAdd b ->
                            (b.axis() == rank - 1 || b.axis() == -1)
                                    && g.isConstant(r.inputs().get(1))
                                    && g.value(r.inputs().get(1)).shape().equals(List.of(co));
                        case Op.Unary u -> true;
                        case Op.Clip c -> true;
                        default -> false;
                    };
            if (!ok || r.output().dtype() != DType.FLOAT32) break;
            chain.add(r);
            v = r.output().name();
        }
        return chain;
    }

    /** The shape a converted layer's GEMM reads its input in: NHWC as it is, a dense layer's [N, K] as [1, 1, N, K]. */
    private static List<Long> inputImage(Graph g, Node n) {
        List<Long> xs = g.value(n.inputs().getFirst()).shape();
        return n.op() instanceof Op.Dense ? List.of(1L, 1L, xs.get(0), xs.get(1)) : xs;
    }

    /** Constant vector {@code b} padded with zeros to {@code length} (the GEMM's rounded-up channels). */
    private static String padded(GraphEditor e, Graph g, String b, long length) {
        String name = b + ".padded" + length;
        if (e.constants.containsKey(name)) return name;
        NDArray src = g.constant(b);
        NDArray p = GraphBuilder.autoArray(DType.FLOAT32, length);
        for (long i = 0; i < src.numElements(); i++) p.setDoubleFlat(src.getDoubleFlat(i), i);
        e.constants.put(name, p);
        return name;
    }

    /** Null where the convolution converts, else why it stays float32. */
    private static String reason(Graph g, Node n, Op.Conv2d c) {
        if (!c.layout().equals("NHWC")) return "layout " + c.layout() + ", not NHWC";
        if (c.groups() != 1) return c.groups() + " groups (a GEMM reduces over one group's channels)";
        String w = n.inputs().get(1);
        if (!g.isConstant(w)) return "its weight '" + w + "' is not a constant";
        NDArray wa = g.constant(w);
        if (wa.dtype() != DType.FLOAT32 || wa.rank() != 4) {
            return "its weight is " + wa.dtype() + " of rank " + wa.rank() + ", not float32 HWIO";
        }
        if (g.value(n.inputs().get(0)).dtype() != DType.FLOAT32 || n.output().dtype() != DType.FLOAT32) {
            return "its input or output is not float32";
        }
        return null;
    }

    /** Null where the dense layer converts, else why it stays float32. */
    private static String denseReason(Graph g, Node n) {
        if (g.value(n.inputs().get(0)).shape().size() != 2) return "its input is not 2-D";
        String w = n.inputs().get(1);
        if (!g.isConstant(w)) return "its weight '" + w + "' is not a constant";
        NDArray wa = g.constant(w);
        if (wa.dtype() != DType.FLOAT32 || wa.rank() != 2) {
            return "its weight is " + wa.dtype() + " of rank " + wa.rank() + ", not float32 [units, K]";
        }
        if (g.value(n.inputs().get(0)).dtype() != DType.FLOAT32 || n.output().dtype() != DType.FLOAT32) {
            return "its input or output is not float32";
        }
        return null;
    }

    /**
     * A dense float32 weight {@code [units, K]} rounded to {@code half}, transposed to the GEMM's {@code [kp, cop]}.
     */
    static NDArray denseGemmWeight(NDArray w, DType half, long kp, long cop) {
        long units = w.shape()[0], k = w.shape()[1];
        NDArray p = GraphBuilder.autoArray(half, kp, cop);
        for (long u = 0; u < units; u++) for (long r = 0; r < k; r++) p.setDouble(w.getDoubleFlat(u * k + r), r, u);
        return p;
    }

    /**
     * The HWIO float32 weight {@code [KH, KW, C, CO]} rounded to {@code half} as the GEMM's {@code [kp, cop]}: row
     * {@code (kh * KW + kw) * C + c} (the same order in memory), zeros past K rows and CO columns.
     */
    static NDArray gemmWeight(NDArray w, DType half, long kp, long cop) {
        long[] s = w.shape();
        long k = s[0] * s[1] * s[2], co = s[3];
        NDArray p = GraphBuilder.autoArray(half, kp, cop);
        for (long r = 0; r < k; r++) for (long o = 0; o < co; o++) p.setDouble(w.getDoubleFlat(r * co + o), r, o);
        return p;
    }

    private static long roundUp(long v, long m) {
        return (v + m - 1) / m * m;
    }
}
