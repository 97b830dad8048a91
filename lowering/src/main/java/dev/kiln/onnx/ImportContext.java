package dev.kiln.onnx;

import dev.kiln.graph.GraphBuilder;
import dev.kiln.graph.Op;
import dev.kiln.graph.Value;
import dev.kiln.ir.KilnException;
import dev.kiln.onnx.Ref.ConstRef;
import dev.kiln.onnx.Ref.ValueRef;
import dev.kiln.onnx.proto.Onnx.NodeProto;
import dev.kiln.te.Te;
import dev.kiln.te.Tensor;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.LongStream;

/**
 * The state of one import: what each ONNX name stands for, the graph being built, and the layout
 * conversions between ONNX's order and the NHWC order Kiln's convolutions are tuned for.
 */
final class ImportContext {
    /** Kiln axis k of an NHWC value holds ONNX (NCHW) axis NHWC[k]. */
    static final int[] NHWC = {0, 2, 3, 1};

    final GraphBuilder g;
    final int opset;
    private final Map<String, Ref> refs = new HashMap<>();
    private final Set<String> graphOutputs;
    private final Set<String> taken = new HashSet<>();
    private final Map<Ref, Map<String, Value>> converted = new IdentityHashMap<>();
    private final Map<String, Value> reshapes = new HashMap<>();

    ImportContext(GraphBuilder g, int opset, Set<String> graphOutputs) {
        this.g = g;
        this.opset = opset;
        this.graphOutputs = Set.copyOf(graphOutputs);
    }

    // ---- names --------------------------------------------------------------------------------

    void define(String onnxName, Ref r) {
        if (refs.putIfAbsent(onnxName, r) != null)
            throw new KilnException("tensor '" + onnxName + "' is defined twice");
    }

    boolean isDefined(String onnxName) {
        return refs.containsKey(onnxName);
    }

    Ref ref(String onnxName) {
        Ref r = refs.get(onnxName);
        if (r == null)
            throw new KilnException(
                    "input '" + onnxName + "' is not a graph input, initializer or output of an earlier node");
        return r;
    }

    /** Input {@code i} of {@code node}, or null when absent or empty (an omitted optional input). */
    Ref input(NodeProto node, int i) {
        return i < node.getInputCount() && !node.getInput(i).isEmpty() ? ref(node.getInput(i)) : null;
    }

    /** Input {@code i}, which must be present. */
    Ref required(NodeProto node, int i) {
        Ref r = input(node, i);
        if (r == null) throw new KilnException("input " + i + " is required");
        return r;
    }

    /** Input {@code i} as a constant known at import; {@code what} names it in the error. */
    Const constant(NodeProto node, int i, String what) {
        Ref r = required(node, i);
        if (r instanceof ConstRef c) return c.c();
        throw new KilnException("input " + i + " (" + what + ", '" + node.getInput(i)
                + "') must be a constant known at import, " + "but it is computed from the graph's inputs");
    }

    /** A graph name based on {@code base}, unique in the graph. */
    String fresh(String base) {
        String n = base;
        for (int i = 1; taken.contains(n); i++) n = base + "_" + i;
        taken.add(n);
        return n;
    }

    void reserve(String name) {
        taken.add(name);
    }

    // ---- emitting nodes -------------------------------------------------------------------------

    /** A node for ONNX output {@code out} whose Kiln value has axis order {@code layout} (null: ONNX's). */
    ValueRef emit(String out, Op op, int[] layout, Value... ins) {
        boolean reordered = layout != null && !ValueRef.isIdentity(layout);
        String name = fresh(reordered && graphOutputs.contains(out) ? out + "/nhwc" : out);
        Value v = g.node(name, op, ins);
        long[] k = v.dims();
        long[] logical = new long[k.length];
        for (int i = 0; i < k.length; i++) logical[reordered ? layout[i] : i] = k[i];
        ValueRef r = new ValueRef(v, logical, reordered ? layout : null);
        define(out, r);
        return r;
    }

    /**
     * A node for ONNX output {@code out} computed on row-major values whose ONNX shape is {@code shape},
     * a reshape of the node's own (a view: MatMul on [1, 128, 768] runs as a dense [128, 768], and
     * the bias, GELU and layer norm that follow run on that shape too, so they fuse into it).
     */
    ValueRef emitView(String out, Op op, long[] shape, Value... ins) {
        List<Tensor> ts = new ArrayList<>();
        for (int i = 0; i < ins.length; i++) ts.add(Te.placeholder("p" + i, ins[i].dtype(), ins[i].dims()));
        boolean view = !Arrays.equals(
                op.build(ts).shape().dims().stream().mapToLong(Long::longValue).toArray(), shape);
        Value v = g.node(fresh(view && graphOutputs.contains(out) ? out + "/view" : out), op, ins);
        return defineView(out, v, shape);
    }

    /**
     * ONNX output {@code out} is {@code v} under the row-major shape {@code shape} (a graph output gets a real
     * reshape).
     */
    ValueRef defineView(String out, Value v, long[] shape) {
        if (graphOutputs.contains(out) && !Arrays.equals(v.dims(), shape)) {
            v = g.node(fresh(out), new Op.Reshape(LongStream.of(shape).boxed().toList()), v);
        }
        ValueRef r = new ValueRef(v, shape, null);
        define(out, r);
        return r;
    }

    /** Whether {@code r} is a graph value kept under another row-major shape than ONNX's. */
    static boolean isView(Ref r) {
        return r instanceof ValueRef v
                && v.layout() == null
                && !Arrays.equals(v.value().dims(), v.shape());
    }

    /** The value's elements in ONNX's row-major order, under {@code dims} (a reshape, made once, when needed). */
    Value asShape(Ref r, long... dims) {
        if (r instanceof ValueRef v && v.layout() == null) return reshaped(v.value(), dims);
        if (r instanceof ConstRef c)
            return inLayout(new ConstRef(c.c().reshape(dims), c.name()), identity(dims.length));
        return reshaped(plain(r), dims);
    }

    private Value reshaped(Value v, long[] dims) {
        if (Arrays.equals(v.dims(), dims)) return v;
        return reshapes.computeIfAbsent(
                v.name() + Arrays.toString(dims),
                k -> g.node(
                        fresh(v.name() + "/reshape"),
                        new Op.Reshape(LongStream.of(dims).boxed().toList()),
                        v));
    }

    /** The ONNX output {@code out} is the constant {@code c} (folded at import). */
    void fold(String out, Const c) {
        define(out, new ConstRef(c));
    }

    // ---- layouts ------------------------------------------------------------------------------

    static int[] layoutOf(Ref r) {
        int[] l = r instanceof ValueRef v ? v.layout() : null;
        return l != null ? l : identity(r.rank());
    }

    static boolean isNhwc(Ref r) {
        return r instanceof ValueRef v && v.layout() != null;
    }

    static int[] identity(int rank) {
        int[] p = new int[rank];
        for (int i = 0; i < rank; i++) p[i] = i;
        return p;
    }

    /** The value NHWC (rank 4). */
    Value nhwc(Ref r) {
        return inLayout(r, NHWC);
    }

    /** The value in ONNX's own axis order. */
    Value plain(Ref r) {
        return inLayout(r, identity(r.rank()));
    }

    /** The value with axis k holding ONNX axis {@code layout[k]}; constants are reordered at import. */
    Value inLayout(Ref r, int[] layout) {
        if (layout.length != r.rank())
            throw new IllegalArgumentException("layout " + Arrays.toString(layout) + " for rank " + r.rank());
        Map<String, Value> byLayout = converted.computeIfAbsent(r, k -> new HashMap<>());
        String key = Arrays.toString(layout);
        Value done = byLayout.get(key);
        if (done != null) return done;
        Value v =
                switch (r) {
                    case ConstRef c -> {
                        Const k = ValueRef.isIdentity(layout) ? c.c() : c.c().transpose(layout);
                        if (k.rank() == 0)
                            k = k.reshape(1); // Kiln values have rank 1 or more; broadcasting is unchanged
                        String base = c.name() == null
                                ? "const"
                                : ValueRef.isIdentity(layout) ? c.name() : c.name() + "/" + layoutName(layout);
                        yield g.constant(fresh(base), k.toNDArray(base));
                    }
                    case ValueRef vr -> reorder(vr, layout);
                };
        byLayout.put(key, v);
        return v;
    }

    private static String layoutName(int[] layout) {
        return Arrays.equals(layout, NHWC)
                ? "nhwc"
                : Arrays.equals(layout, new int[] {2, 3, 1, 0})
                        ? "hwio"
                        : "perm" + Arrays.toString(layout).replaceAll("[^0-9]", "");
    }

    private Value reorder(ValueRef vr, int[] to) {
        if (isView(vr)) vr = new ValueRef(reshaped(vr.value(), vr.shape()), vr.shape(), null);
        int[] from = layoutOf(vr);
        if (Arrays.equals(from, to)) return vr.value();
        long[] shape = vr.shape();
        int[] pos = new int[from.length];
        for (int k = 0; k < from.length; k++) pos[from[k]] = k;
        int[] perm = new int[to.length];
        for (int k = 0; k < to.length; k++) perm[k] = pos[to[k]];
        String own = vr.value().name();
        String base = ValueRef.isIdentity(to)
                ? (own.endsWith("/nhwc") ? own.substring(0, own.length() - 5) : own + "/nchw")
                : own + "/nhwc";
        if (sameOrderOfNonUnitAxes(from, to, shape)) { // only size-1 axes move: a reshape, which is a view
            long[] dims = new long[to.length];
            for (int k = 0; k < to.length; k++) dims[k] = shape[to[k]];
            return g.node(
                    fresh(base), new Op.Reshape(LongStream.of(dims).boxed().toList()), vr.value());
        }
        return g.node(fresh(base), new Op.Transpose(Arrays.stream(perm).boxed().toList()), vr.value());
    }

    private static boolean sameOrderOfNonUnitAxes(int[] from, int[] to, long[] shape) {
        List<Integer> a = Arrays.stream(from).filter(d -> shape[d] != 1).boxed().toList();
        List<Integer> b = Arrays.stream(to).filter(d -> shape[d] != 1).boxed().toList();
        return a.equals(b);
    }
}
