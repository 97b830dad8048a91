package dev.kiln.graph;

import dev.kiln.ir.KilnException;
import dev.kiln.runtime.NDArray;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * A network: inputs, constant weights, operator nodes in topological order, and outputs. It is
 * data, like a schedule: immutable, printable ({@link #toString()}), and run op by op by
 * {@link ReferenceExecutor}, which defines what a correct result of the compiled network is.
 * Passes ({@code dev.kiln.graph.pass}) return new graphs. Build one with {@link GraphBuilder}.
 *
 * <p>Constants are {@link NDArray}s the graph holds but does not own: those made by
 * {@link GraphBuilder} live in automatically managed memory, which the garbage collector frees
 * once no graph or compiled network refers to them.
 */
public final class Graph {
    private final String name;
    private final List<Value> inputs;
    private final Map<String, NDArray> constants;
    private final Map<String, Value> constantValues;
    private final List<Node> nodes;
    private final List<String> outputs;
    private final Map<String, Value> values = new HashMap<>();
    private final Map<String, Node> producers = new HashMap<>();
    private final Map<String, List<Node>> consumers = new HashMap<>();

    public Graph(
            String name, List<Value> inputs, Map<String, NDArray> constants, List<Node> nodes, List<String> outputs) {
        this.name = Objects.requireNonNull(name, "name");
        this.inputs = List.copyOf(inputs);
        this.constants = Collections.unmodifiableMap(new LinkedHashMap<>(constants));
        this.nodes = List.copyOf(nodes);
        this.outputs = List.copyOf(outputs);
        Map<String, Value> cv = new LinkedHashMap<>();
        for (Value v : this.inputs) define(v, "input");
        for (var e : this.constants.entrySet()) {
            NDArray a = e.getValue();
            Value v = new Value(
                    e.getKey(), a.dtype(), Arrays.stream(a.shape()).boxed().toList());
            define(v, "constant");
            cv.put(v.name(), v);
        }
        this.constantValues = Collections.unmodifiableMap(cv);
        for (Node n : this.nodes) {
            for (String in : n.inputs()) {
                if (!values.containsKey(in)) {
                    throw new KilnException(
                            "graph '" + name + "': node '" + n.name() + "' (" + n.op().kind() + ") reads '" + in
                                    + "', which is not an input, a constant or the output of an earlier node");
                }
                consumers.computeIfAbsent(in, k -> new ArrayList<>()).add(n);
            }
            define(n.output(), "node");
            producers.put(n.name(), n);
        }
        if (this.outputs.isEmpty()) throw new KilnException("graph '" + name + "' has no output");
        for (String o : this.outputs) {
            if (!values.containsKey(o))
                throw new KilnException("graph '" + name + "': output '" + o + "' is not a value of the graph");
        }
    }

    private void define(Value v, String what) {
        if (values.putIfAbsent(v.name(), v) != null) {
            throw new KilnException(
                    "graph '" + name + "': the name '" + v.name() + "' of a " + what + " is already taken");
        }
    }

    public String name() {
        return name;
    }

    /** The graph inputs, in order (what {@code run} takes). */
    public List<Value> inputs() {
        return inputs;
    }

    /** The constants (weights) by name. */
    public Map<String, NDArray> constants() {
        return constants;
    }

    /** The nodes, producers before consumers. */
    public List<Node> nodes() {
        return nodes;
    }

    /** The names of the output values, in order. */
    public List<String> outputs() {
        return outputs;
    }

    /** The output values, in order. */
    public List<Value> outputValues() {
        return outputs.stream().map(this::value).toList();
    }

    /** The value of that name; throws naming the graph if there is none. */
    public Value value(String valueName) {
        Value v = values.get(valueName);
        if (v == null) throw new KilnException("graph '" + name + "' has no value '" + valueName + "'");
        return v;
    }

    public boolean hasValue(String valueName) {
        return values.containsKey(valueName);
    }

    public boolean isConstant(String valueName) {
        return constants.containsKey(valueName);
    }

    public boolean isInput(String valueName) {
        return inputs.stream().anyMatch(v -> v.name().equals(valueName));
    }

    public boolean isOutput(String valueName) {
        return outputs.contains(valueName);
    }

    /** The constant of that name. */
    public NDArray constant(String valueName) {
        NDArray a = constants.get(valueName);
        if (a == null) throw new KilnException("graph '" + name + "': '" + valueName + "' is not a constant");
        return a;
    }

    /** The node that produces the value, or null for an input or constant. */
    public Node producer(String valueName) {
        return producers.get(valueName);
    }

    /** The nodes that read the value, in graph order (a node reading it twice is listed twice). */
    public List<Node> consumers(String valueName) {
        return consumers.getOrDefault(valueName, List.of());
    }

    /** Bytes of all constants. */
    public long constantBytes() {
        return constantValues.values().stream().mapToLong(Value::bytes).sum();
    }

    /** A readable printout: inputs, a line per constant group summary, one line per node, outputs. */
    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder("graph ")
                .append(name)
                .append(" (")
                .append(nodes.size())
                .append(" nodes, ")
                .append(constants.size())
                .append(" constants, ")
                .append(String.format(java.util.Locale.ROOT, "%.1f MB", constantBytes() / 1e6))
                .append(")\n");
        for (Value v : inputs) sb.append("  input ").append(v).append('\n');
        for (Node n : nodes) sb.append("  ").append(n).append('\n');
        sb.append("  outputs ").append(outputs).append('\n');
        return sb.toString();
    }
}
