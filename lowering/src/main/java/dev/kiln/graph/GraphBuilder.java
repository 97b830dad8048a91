package dev.kiln.graph;

import dev.kiln.graph.Op.BinaryKind;
import dev.kiln.graph.Op.UnaryKind;
import dev.kiln.ir.DType;
import dev.kiln.ir.KilnException;
import dev.kiln.runtime.NDArray;
import java.lang.foreign.Arena;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.SplittableRandom;

/**
 * Builds a {@link Graph} op by op, inferring each node's shape as it is added (a bad shape or
 * attribute throws at once, naming the node):
 *
 * <pre>{@code
 * GraphBuilder g = new GraphBuilder("mlp");
 * Value x = g.input("x", FLOAT32, 1, 784);
 * Value h = g.relu(g.add(g.dense(x, g.weight("fc1.w", 1, 256, 784)), g.weight("fc1.b", 2, 256)));
 * Graph net = g.output(g.dense(h, g.weight("fc2.w", 3, 10, 256))).build();
 * }</pre>
 *
 * <p>Node names are given or made unique from the op's kind ("conv2d_3"). Weights made here are
 * seeded random ({@link #weight}, uniform in [-scale, scale)) and live in memory the garbage
 * collector frees.
 */
public final class GraphBuilder {
    private final String name;
    private final List<Value> inputs = new ArrayList<>();
    private final Map<String, NDArray> constants = new LinkedHashMap<>();
    private final List<Node> nodes = new ArrayList<>();
    private final List<String> outputs = new ArrayList<>();
    private final Map<String, Value> values = new HashMap<>();
    private final Map<String, Integer> counters = new HashMap<>();

    public GraphBuilder(String name) {
        if (name == null || name.isBlank()) throw new KilnException("a graph needs a name");
        this.name = name;
    }

    /** A builder holding everything {@code g} has, to add nodes after (the graph is unchanged). */
    public static GraphBuilder from(Graph g) {
        GraphBuilder b = new GraphBuilder(g.name());
        for (Value v : g.inputs()) b.register(v);
        b.inputs.addAll(g.inputs());
        g.constants().forEach(b::constant);
        for (Node n : g.nodes()) {
            b.register(n.output());
            b.nodes.add(n);
        }
        return b;
    }

    /** A graph input. */
    public Value input(String valueName, DType dtype, long... shape) {
        Value v = new Value(valueName, dtype, Arrays.stream(shape).boxed().toList());
        register(v);
        inputs.add(v);
        return v;
    }

    /** A constant holding {@code data} (kept by reference, never copied or closed). */
    public Value constant(String valueName, NDArray data) {
        Objects.requireNonNull(data, "data");
        Value v = new Value(
                valueName, data.dtype(), Arrays.stream(data.shape()).boxed().toList());
        register(v);
        constants.put(valueName, data);
        return v;
    }

    /** A float32 constant of seeded random values, uniform in [-scale, scale). */
    public Value weight(String valueName, long seed, double scale, long... shape) {
        return constant(valueName, randomArray(seed, -scale, scale, shape));
    }

    /** A float32 constant of seeded random values, uniform in [lo, hi). */
    public Value uniform(String valueName, long seed, double lo, double hi, long... shape) {
        return constant(valueName, randomArray(seed, lo, hi, shape));
    }

    /** A float32 constant filled with {@code v}. */
    public Value fill(String valueName, float v, long... shape) {
        NDArray a = autoArray(DType.FLOAT32, shape);
        for (long i = 0; i < a.numElements(); i++) a.setDoubleFlat(v, i);
        return constant(valueName, a);
    }

    /** A compact float32 array in memory managed by the garbage collector, uniform in [lo, hi) from {@code seed}. */
    public static NDArray randomArray(long seed, double lo, double hi, long... shape) {
        NDArray a = autoArray(DType.FLOAT32, shape);
        SplittableRandom r = new SplittableRandom(seed);
        for (long i = 0; i < a.numElements(); i++) a.setDoubleFlat((float) (lo + (hi - lo) * r.nextDouble()), i);
        return a;
    }

    /** A zero-filled compact array in memory managed by the garbage collector (for constants). */
    public static NDArray autoArray(DType dtype, long... shape) {
        long n = 1;
        for (long d : shape) n = Math.multiplyExact(n, d);
        var seg = Arena.ofAuto().allocate(Math.max(1, n * dtype.bytes()), NDArray.ALIGNMENT);
        return NDArray.wrap(seg, dtype, shape, NDArray.rowMajorStrides(shape));
    }

    /** A node of {@code op} named {@code nodeName} (null: made from the op's kind) reading {@code ins}. */
    public Value node(String nodeName, Op op, Value... ins) {
        Objects.requireNonNull(op, "op");
        String n = nodeName != null ? nodeName : fresh(op.kind());
        List<String> names = new ArrayList<>();
        for (int i = 0; i < ins.length; i++) {
            Value v = ins[i];
            if (v == null || values.get(v.name()) != v && !v.equals(values.get(v.name()))) {
                throw new KilnException("node '" + n + "' (" + op.kind() + "): input " + i + " "
                        + (v == null ? "is null" : "'" + v.name() + "' is not a value of graph '" + name + "'"));
            }
            names.add(v.name());
        }
        if (op.arity() >= 0 ? ins.length != op.arity() : ins.length == 0) {
            throw new KilnException("node '" + n + "' (" + op.kind() + ") takes "
                    + (op.arity() >= 0 ? op.arity() : "at least 1") + " input(s), got " + ins.length);
        }
        Value out = OpTensors.infer(n, op, List.of(ins));
        register(out);
        nodes.add(new Node(op, names, out));
        return out;
    }

    /** {@link #node(String, Op, Value...)} with a generated name. */
    public Value node(Op op, Value... ins) {
        return node(null, op, ins);
    }

    /** Marks values as graph outputs, in order. */
    public GraphBuilder output(Value... vs) {
        for (Value v : vs) outputs.add(v.name());
        return this;
    }

    public Graph build() {
        return new Graph(name, inputs, constants, nodes, outputs);
    }

    // ---- the operator library, one method per op ----------------------------------------------

    public Value conv2d(String n, Value x, Value w, String layout, long stride, long pad, long groups) {
        return node(n, Op.Conv2d.of(layout, stride, pad, groups), x, w);
    }

    public Value dense(String n, Value x, Value w) {
        return node(n, new Op.Dense(), x, w);
    }

    public Value dense(Value x, Value w) {
        return dense(null, x, w);
    }

    public Value batchMatmul(String n, Value a, Value b, boolean transA, boolean transB) {
        return node(n, new Op.BatchMatmul(transA, transB), a, b);
    }

    public Value biasAdd(String n, Value x, Value bias, int axis) {
        return node(n, new Op.BiasAdd(axis), x, bias);
    }

    public Value batchNorm(String n, Value x, Value mean, Value var, Value gamma, Value beta, int axis, double eps) {
        return node(n, new Op.BatchNorm(axis, eps), x, mean, var, gamma, beta);
    }

    public Value add(String n, Value a, Value b) {
        return node(n, new Op.Binary(BinaryKind.ADD), a, b);
    }

    public Value add(Value a, Value b) {
        return add(null, a, b);
    }

    public Value multiply(String n, Value a, Value b) {
        return node(n, new Op.Binary(BinaryKind.MULTIPLY), a, b);
    }

    public Value binary(String n, BinaryKind k, Value a, Value b) {
        return node(n, new Op.Binary(k), a, b);
    }

    public Value relu(String n, Value x) {
        return node(n, new Op.Unary(UnaryKind.RELU), x);
    }

    public Value relu(Value x) {
        return relu(null, x);
    }

    public Value unary(String n, UnaryKind k, Value x) {
        return node(n, new Op.Unary(k), x);
    }

    public Value gelu(String n, Value x) {
        return node(n, new Op.Unary(UnaryKind.GELU), x);
    }

    public Value clip(String n, Value x, double lo, double hi) {
        return node(n, new Op.Clip(lo, hi), x);
    }

    public Value maxPool2d(String n, Value x, String layout, long kernel, long stride, long pad) {
        return node(n, new Op.MaxPool2d(layout, kernel, stride, pad), x);
    }

    public Value avgPool2d(String n, Value x, String layout, long kernel, long stride, long pad) {
        return node(n, new Op.AvgPool2d(layout, kernel, stride, pad, false), x);
    }

    public Value globalAvgPool2d(String n, Value x, String layout) {
        return node(n, new Op.GlobalAvgPool2d(layout), x);
    }

    public Value softmax(String n, Value x, int axis) {
        return node(n, new Op.Softmax(axis), x);
    }

    public Value layerNorm(String n, Value x, Value gamma, Value beta, int axes, double eps) {
        return node(n, new Op.LayerNorm(axes, eps), x, gamma, beta);
    }

    public Value mean(String n, Value x, boolean keepdims, Integer... axes) {
        return node(n, new Op.Mean(List.of(axes), keepdims), x);
    }

    public Value reshape(String n, Value x, long... shape) {
        return node(n, new Op.Reshape(Arrays.stream(shape).boxed().toList()), x);
    }

    public Value transpose(String n, Value x, int... perm) {
        return node(n, new Op.Transpose(Arrays.stream(perm).boxed().toList()), x);
    }

    public Value concat(String n, int axis, Value... xs) {
        return node(n, new Op.Concat(axis), xs);
    }

    // ------------------------------------------------------------------------------------------

    private void register(Value v) {
        if (values.putIfAbsent(v.name(), v) != null) {
            throw new KilnException("graph '" + name + "': the name '" + v.name() + "' is already taken");
        }
    }

    private String fresh(String kind) {
        while (true) {
            int i = counters.merge(kind, 1, Integer::sum);
            String n = kind + "_" + i;
            if (!values.containsKey(n)) return n;
        }
    }
}
