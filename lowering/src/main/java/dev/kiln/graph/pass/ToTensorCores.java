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
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

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
 * s     = strided_slice(g)            [N*OH*OW, CO], where Mp or COp was rounded up
 * out   = reshape(s)                  [N, OH, OW, CO], the conv's own output value
 * </pre>
 *
 * {@code w.gemm} is the HWIO weight rounded to the half type once, here, seen as {@code [KH*KW*C, CO]} and padded with
 * zeros to {@code [Kp, COp]} (K up to a multiple of 16). Bias, activation and residual add stay float32 after the
 * reshape, where they fuse with it and the slice into one element-wise kernel. Everything else stays as it was, and
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

    /** The graph with its convolutions on {@code half} (float16 or bfloat16) implicit GEMMs. */
    public static Result apply(Graph graph, DType half) {
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
        for (Node n : e.nodes) {
            String why =
                    switch (n.op()) {
                        case Op.Conv2d c -> reason(g, n, c);
                        case Op.Dense d -> denseReason(g, n);
                        default -> "";
                    };
            if (why != null) {
                if (!why.isEmpty()) kept.put(n.name(), why);
                out.add(n);
                continue;
            }
            boolean dense = n.op() instanceof Op.Dense;
            String x = n.inputs().get(0), w = n.inputs().get(1);
            String xh = casts.get(x);
            if (xh == null) {
                List<Long> xs = g.value(x).shape();
                String src = x;
                if (dense) {
                    // [N, K] read as a 1 x N image of K channels (the reshape fuses with the cast)
                    src = e.freshName(x + ".image");
                    List<Long> image = List.of(1L, 1L, xs.get(0), xs.get(1));
                    out.add(new Node(new Op.Reshape(image), List.of(x), new Value(src, DType.FLOAT32, image)));
                    xs = image;
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
            String gemm = e.freshName(n.name() + ".gemm");
            out.add(new Node(op, List.of(xh, wg), new Value(gemm, DType.FLOAT32, List.of(mp, cop))));
            boolean sliced = mp != m || cop != co;
            if (dense) {
                // [N, units] is the GEMM's first rows and columns: the slice (or a copy) is the layer's output
                out.add(
                        sliced
                                ? new Node(
                                        new Op.StridedSlice(List.of(0L, 0L), List.of(1L, 1L), List.of(m, co)),
                                        List.of(gemm),
                                        n.output())
                                : new Node(new Op.Reshape(shape), List.of(gemm), n.output()));
            } else {
                String flat = gemm;
                if (sliced) {
                    flat = e.freshName(n.name() + ".rows");
                    out.add(new Node(
                            new Op.StridedSlice(List.of(0L, 0L), List.of(1L, 1L), List.of(m, co)),
                            List.of(gemm),
                            new Value(flat, DType.FLOAT32, List.of(m, co))));
                }
                out.add(new Node(new Op.Reshape(shape), List.of(flat), n.output()));
            }
            converted.add(n.name());
        }
        e.nodes.clear();
        e.nodes.addAll(out);
        return new Result(e.build(), converted, kept);
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
