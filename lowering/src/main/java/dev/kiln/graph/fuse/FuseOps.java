package dev.kiln.graph.fuse;

import dev.kiln.graph.Graph;
import dev.kiln.graph.GroupDag;
import dev.kiln.graph.LayoutOps;
import dev.kiln.graph.Node;
import dev.kiln.graph.OpPattern;
import dev.kiln.graph.ReductionOps;
import dev.kiln.graph.Value;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Cuts a graph into fused groups by TVM's rules (FuseOps; ../shared/reference/networks-notes.md
 * §2), simplified to groups with one output:
 *
 * <ol>
 *   <li>An anchor (conv2d, dense, batch_matmul: {@link OpPattern#OUT_EWISE_FUSABLE}) takes the chain
 *       of elementwise and broadcast ops after it (bias, ReLU, clip, GELU, a residual add, a scale),
 *       as long as each value in the chain has exactly one reader and is not a graph output. On request
 *       ({@link #apply(Graph, boolean)}) the chain may also take one softmax or layer norm over the last
 *       axis (attention scores and their softmax, a dense layer and the layer norm after its residual add;
 *       TVM keeps those apart). Two anchors never share a group. A chain that would end widening its value (a
 * dequantize, {@link #widens}) for an epilogue of another anchor's group stops before that step, which joins
 * the reader's group instead (rule 2).</li>
 *   <li>Going backwards, an elementwise, broadcast or injective op whose only reader belongs to a
 *       reduction group (pooling, softmax, layer norm, mean) or to another such light group joins
 *       that group, as the reader's inlined producer (an add before a layer norm, a chain of
 *       reshapes and transposes). Light ops never join an anchor's group from the input side, with one
 *       exception (Kiln's, not TVM's): a transpose of a graph input whose only reader is a convolution
 *       joins the convolution's group as its prologue ({@link #isInputLayoutPrologue}). That is the NCHW to
 *       NHWC copy the ONNX import puts before an image model's first conv; in the conv's group the search
 *       inlines it into the conv's padding copy, which then reads the input in its original layout, so the
 *       network runs no transpose kernel of its own (MobileNet-V2's took 0.06-0.16 ms of a 4-5.5 ms run;
 *       ONNX Runtime's first conv reads NCHW too). And an elementwise or broadcast op of the epilogue's shape
 *       whose only reader is an epilogue node joins as that node's other operand ({@link #isEpilogueOperand}):
 *       the dequantize of a quantised residual connection. A widening step (a dequantize) whose only reader is a
 *       convolution's data input joins the convolution's group as its prologue ({@link #isWideningPrologue}), even
 *       from the end of another anchor's chain (rule 1b).</li>
 *   <li>A reduction (pooling, softmax, layer norm) takes the one narrowing step after it, through reshapes, when
 *       each is the only reader of the value before it ({@link #isNarrowingEpilogue}: a cast to bfloat16, a
 *       quantize), Kiln's rule (step 1c).</li>
 *   <li>Every other node is a group of its own; groups are capped at {@link #MAX_NODES} nodes.</li>
 * </ol>
 *
 * <p>A group's inner values are read only inside it, so running the groups in the order of their
 * last nodes is a valid order and no cycle can form.
 */
public final class FuseOps {
    /** The most nodes one group may hold (TVM's cap on fused function size). */
    public static final int MAX_NODES = 256;

    private FuseOps() {}

    /** The groups by TVM's rules ({@link #apply(Graph, boolean)} without row reductions): what networks use. */
    public static Partition apply(Graph g) {
        return apply(g, false);
    }

    /**
     * The groups of {@code g}; with {@code rowReductions} an anchor's chain may also take one softmax or layer norm
     * over the last axis ({@link #reducesRows}), which the CPU search computes per block of output rows
     * ({@code MultiLevelTilingWithRowFusion}). Off in networks: on the BERT layer at 2 threads and 200 s of tuning
     * the fused groups got half the trials in the same time (341 against 692) and ran slower than the separate
     * tasks (attention 0.35 against 0.13 + 0.07 ms, the FFN's dense + layer norm 1.88 against 1.48 + 0.03 ms;
     * fifteenth session, docs/PERFORMANCE.md).
     */
    public static Partition apply(Graph g, boolean rowReductions) {
        List<Node> nodes = g.nodes();
        Map<String, Integer> index = new HashMap<>();
        for (int i = 0; i < nodes.size(); i++) index.put(nodes.get(i).name(), i);
        int[] group = new int[nodes.size()];
        for (int i = 0; i < group.length; i++) group[i] = i;
        int[] size = new int[nodes.size()];
        java.util.Arrays.fill(size, 1);
        boolean[] anchored = new boolean[nodes.size()];
        int[] chainEnd = new int[nodes.size()]; // an anchor's last chain node (itself when it took none)

        // 1. anchors take their elementwise/broadcast epilogue chains
        for (int i = 0; i < nodes.size(); i++) {
            Node n = nodes.get(i);
            if (n.op().pattern() != OpPattern.OUT_EWISE_FUSABLE || group[i] != i) continue;
            anchored[i] = true;
            chainEnd[i] = i;
            Node cur = n;
            boolean rowReduced = false;
            while (true) {
                Node next = soleReader(g, cur);
                if (next == null || size[i] >= MAX_NODES) break;
                boolean row = rowReductions && !rowReduced && reducesRows(g, next, cur);
                if (!next.op().pattern().isEpilogue() && !row) break;
                int j = index.get(next.name());
                if (group[j] != j || size[j] != 1) break;
                group[j] = i;
                size[i]++;
                rowReduced |= row;
                cur = next;
                chainEnd[i] = j;
            }
        }
        // 1b. a chain that ends widening its value for another anchored group's epilogue gives that step back
        for (int i = 0; i < nodes.size(); i++) {
            int last = chainEnd[i];
            if (!anchored[i] || last == i) continue;
            Node end = nodes.get(last);
            Node reader = soleReader(g, end);
            if (reader == null || !widens(g, end)) continue;
            if (!reader.op().pattern().isEpilogue() && !isWideningPrologue(g, end, reader)) continue;
            int r = root(group, index.get(reader.name()));
            if (r == i || !anchored[r]) continue;
            group[last] = last; // step 2 puts it in the reader's group as an epilogue operand
            size[i]--;
        }
        // 1c. a reduction (pooling, softmax, layer norm) takes the narrowing step after it (a cast to bfloat16, a
        // quantize), through reshapes, when each is the only reader of the value before it
        for (int i = 0; i < nodes.size(); i++) {
            Node n = nodes.get(i);
            if (n.op().pattern() != OpPattern.COMM_REDUCE || group[i] != i) continue;
            List<Integer> chain = new ArrayList<>();
            Node cur = n;
            Node next = soleReader(g, n);
            while (next != null && next.op() instanceof LayoutOps.Reshape) {
                chain.add(index.get(next.name()));
                cur = next;
                next = soleReader(g, next);
            }
            if (next == null || !isNarrowingEpilogue(cur, next, n)) continue;
            chain.add(index.get(next.name()));
            if (!chain.stream().allMatch(j -> group[j] == j && size[j] == 1)) continue;
            for (int j : chain) group[j] = i;
            size[i] += chain.size();
        }
        // 2. light producers join their sole reader's group unless it is anchored (an input's layout copy may)
        for (int i = nodes.size() - 1; i >= 0; i--) {
            Node n = nodes.get(i);
            if (group[i] != i || size[i] != 1 || !n.op().pattern().isLight()) continue;
            Node reader = soleReader(g, n);
            if (reader == null) continue;
            int r = root(group, index.get(reader.name()));
            if (anchored[r]
                    && (isInputLayoutPrologue(g, n, reader)
                            || isWideningPrologue(g, n, reader)
                            || isEpilogueOperand(g, n, reader, nodes, group, r, index))
                    && size[r] < MAX_NODES) {
                group[i] = r;
                size[r]++;
                continue;
            }
            if (anchored[r] || size[r] >= MAX_NODES) continue;
            OpPattern rp = nodes.get(r).op().pattern();
            if (rp != OpPattern.COMM_REDUCE && !rp.isLight() && !groupHasReduction(nodes, group, r)) continue;
            group[i] = r;
            size[r]++;
        }
        // collect groups, ordered by their last node
        Map<Integer, List<Node>> members = new HashMap<>();
        for (int i = 0; i < nodes.size(); i++)
            members.computeIfAbsent(root(group, i), k -> new ArrayList<>()).add(nodes.get(i));
        List<List<Node>> lists = new ArrayList<>(members.values());
        lists.sort(Comparator.comparingInt(l -> index.get(l.getLast().name())));
        List<FusedGroup> out = new ArrayList<>();
        for (List<Node> l : lists) {
            OpPattern p = l.stream()
                    .map(x -> x.op().pattern())
                    .max(Comparator.naturalOrder())
                    .orElseThrow();
            out.add(new FusedGroup(out.size(), l, p, GroupDag.of(g, l)));
        }
        return new Partition(g, out);
    }

    /**
     * Whether {@code reader} is a softmax over the last axis or a layer norm over the last axis of {@code value}'s
     * node, read as its data input: a reduction that keeps the shape and needs only whole rows, which the CPU
     * search computes per block of the anchor's output rows ({@code MultiLevelTilingWithRowFusion}).
     */
    static boolean reducesRows(Graph g, Node reader, Node value) {
        if (reader.inputs().isEmpty() || !reader.inputs().getFirst().equals(value.name())) return false;
        int rank = value.output().shape().size();
        if (rank < 2) return false;
        return switch (reader.op()) {
            case ReductionOps.Softmax sm -> sm.axis() == rank - 1 || sm.axis() == -1;
            case ReductionOps.LayerNorm ln -> ln.axes() == 1;
            default -> false;
        };
    }

    /**
     * Whether {@code n} is a transpose that reads only a graph input and whose only reader, {@code reader}, is a
     * convolution reading it as its data (first) input: the layout copy of an image input that the convolution's
     * group takes as its prologue. A transposed input of a matmul stays a group of its own (TVM's rule): inlined,
     * it would turn the matmul's contiguous operand reads into strided ones.
     */
    static boolean isInputLayoutPrologue(Graph g, Node n, Node reader) {
        if (!(n.op() instanceof LayoutOps.Transpose)) return false;
        if (n.inputs().size() != 1 || !g.isInput(n.inputs().getFirst())) return false;
        return readsAsConvData(reader, n);
    }

    /** Whether {@code reader} is a convolution (an anchor) that reads {@code n}'s value as its data (first) input. */
    private static boolean readsAsConvData(Node reader, Node n) {
        if (reader.op().pattern() != OpPattern.OUT_EWISE_FUSABLE
                || !reader.op().kind().startsWith("conv")) return false;
        return !reader.inputs().isEmpty() && reader.inputs().getFirst().equals(n.name());
    }

    /**
     * Whether {@code n} widens its value ({@link #widens}: a dequantize) and its only reader, {@code reader}, is a
     * convolution reading it as its data (first) input: the conv's group takes it as its prologue (step 1b takes it
     * from the end of its producer's chain), so the value crosses memory narrow and the conv converts each element
     * where it reads it. A QDQ MobileNet-V2's depthwise convs compute in float on dequantised 8-bit values: each
     * expansion wrote its output as float32 for them (four times the bytes, 4.8 MB at 112 x 112 x 96) before this.
     */
    static boolean isWideningPrologue(Graph g, Node n, Node reader) {
        return widens(g, n) && readsAsConvData(reader, n) && reader.inputs().lastIndexOf(n.name()) == 0;
    }

    /**
     * Whether {@code n} writes wider elements than its first input has (a dequantize: 8-bit to float32): at the end
     * of an anchor's chain whose value another anchored group's epilogue reads, it belongs in that group (step 1b),
     * so the value crosses memory narrow. A quantised ResNet's downsample conv wrote its output as float32 for the
     * residual add (four times the bytes of the uint8) before this.
     */
    static boolean widens(Graph g, Node n) {
        if (!n.op().pattern().isEpilogue() || n.inputs().isEmpty()) return false;
        Value in = g.value(n.inputs().getFirst());
        return in != null && n.output().dtype().bytes() > in.dtype().bytes();
    }

    /**
     * Whether {@code next}, elementwise or broadcast, reads {@code cur}'s value (the reduction {@code reduction}'s, or
     * a reshape of it) as its first input only and writes narrower elements than the reduction (a cast to bfloat16 or
     * float16, a quantize to 8 bits): the reduction's group takes it (step 1c, Kiln's rule; TVM keeps a reduction's
     * readers apart), so the pooled, normalised or softmaxed value is written once, narrow, where it was written as
     * float32 and read back by a cast kernel of its own. A bfloat16 ResNet-50's max pool before its first block, its
     * global pool before the classifier and a BERT layer's layer norm before the query, key and value denses each ran
     * that cast kernel before this.
     */
    static boolean isNarrowingEpilogue(Node cur, Node next, Node reduction) {
        if (!next.op().pattern().isEpilogue() || next.inputs().isEmpty()) return false;
        if (!next.inputs().getFirst().equals(cur.name()) || next.inputs().lastIndexOf(cur.name()) != 0) return false;
        return next.output().shape().equals(cur.output().shape())
                && next.output().dtype().bytes() < reduction.output().dtype().bytes();
    }

    /**
     * Whether {@code n}, elementwise or broadcast, is the other operand of an anchor's epilogue node {@code reader}
     * (its only reader, not the anchor) with the reader's shape, and reads nothing group {@code r} computes: a
     * dequantize of the skip connection that a quantised residual add reads. In the group each element of it is
     * computed once, where the add reads it, so the network reads the int8 skip in the epilogue instead of
     * writing and reading it again as float32 (four times the bytes) in a kernel of its own.
     */
    static boolean isEpilogueOperand(
            Graph g, Node n, Node reader, List<Node> nodes, int[] group, int r, Map<String, Integer> index) {
        if (!n.op().pattern().isEpilogue() || !reader.op().pattern().isEpilogue()) return false;
        if (!n.output().shape().equals(reader.output().shape())) return false;
        for (String in : n.inputs()) {
            Integer j = index.get(in);
            if (j != null && root(group, j) == r) return false;
        }
        return true;
    }

    private static boolean groupHasReduction(List<Node> nodes, int[] group, int r) {
        for (int i = 0; i < nodes.size(); i++) {
            if (root(group, i) == r && nodes.get(i).op().pattern() == OpPattern.COMM_REDUCE) return true;
        }
        return false;
    }

    private static int root(int[] group, int i) {
        while (group[i] != i) i = group[i];
        return i;
    }

    /** The one node that reads {@code n}'s value, if exactly one node reads it once and it is not a graph output. */
    private static Node soleReader(Graph g, Node n) {
        if (g.isOutput(n.name())) return null;
        List<Node> cs = g.consumers(n.name());
        return cs.size() == 1 ? cs.getFirst() : null;
    }
}
