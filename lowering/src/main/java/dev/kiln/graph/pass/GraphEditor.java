package dev.kiln.graph.pass;

import dev.kiln.graph.Graph;
import dev.kiln.graph.Node;
import dev.kiln.graph.Op;
import dev.kiln.graph.Value;
import dev.kiln.ir.DType;
import dev.kiln.runtime.NDArray;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A mutable copy of a graph's parts that a pass edits in place: replace or drop nodes, add
 * constants, redirect the uses of a value. {@link #build()} drops what no output needs (nodes and
 * constants) and checks the result by constructing the {@link Graph}.
 */
final class GraphEditor {
    final Graph source;
    final Map<String, NDArray> constants;
    final List<Node> nodes;
    final List<String> outputs;

    GraphEditor(Graph g) {
        this.source = g;
        this.constants = new LinkedHashMap<>(g.constants());
        this.nodes = new ArrayList<>(g.nodes());
        this.outputs = new ArrayList<>(g.outputs());
    }

    /** Makes every node after position {@code from}, and the outputs, read {@code to} where they read {@code from}. */
    void replaceUses(String from, String to) {
        for (int i = 0; i < nodes.size(); i++) {
            Node n = nodes.get(i);
            if (n.inputs().contains(from)) {
                List<String> ins =
                        n.inputs().stream().map(s -> s.equals(from) ? to : s).toList();
                nodes.set(i, new Node(n.op(), ins, n.output()));
            }
        }
        outputs.replaceAll(s -> s.equals(from) ? to : s);
    }

    /** A constant name not used in the graph, from {@code base}. */
    String freshName(String base) {
        return freshName(base, List.of());
    }

    /**
     * A name used neither in the graph nor by {@code added}, the nodes a pass has built so far (not yet in
     * {@link #nodes}), from {@code base}.
     */
    String freshName(String base, List<Node> added) {
        Set<String> taken = new HashSet<>(constants.keySet());
        for (Node n : nodes) taken.add(n.name());
        for (Node n : added) taken.add(n.name());
        for (Value v : source.inputs()) taken.add(v.name());
        if (!taken.contains(base)) return base;
        for (int i = 1; ; i++) if (!taken.contains(base + "_" + i)) return base + "_" + i;
    }

    /**
     * {@code reader} as it reads, in place of each value stored only in a narrower type ({@code narrow}: the value's
     * name to its narrow copy's), a float32 widening cast of that copy of its own, which this appends to {@code out},
     * the nodes built so far, just before the reader goes there: an element-wise producer with one reader, it joins
     * the reader's fused group (a residual add's epilogue operand, a light op's inlined producer).
     */
    Node widenedReader(Node reader, Map<String, String> narrow, List<Node> out) {
        List<String> ins = new ArrayList<>(reader.inputs());
        Map<String, String> wide = new LinkedHashMap<>();
        for (int i = 0; i < ins.size(); i++) {
            String v = ins.get(i), stored = narrow.get(v);
            if (stored == null) continue;
            String w = wide.get(v);
            if (w == null) {
                w = freshName(v + ".f32", out);
                out.add(new Node(
                        new Op.Cast(DType.FLOAT32),
                        List.of(stored),
                        new Value(w, DType.FLOAT32, source.value(v).shape())));
                wide.put(v, w);
            }
            ins.set(i, w);
        }
        return wide.isEmpty() ? reader : new Node(reader.op(), ins, reader.output());
    }

    /** The graph, without the nodes and constants no output depends on. */
    Graph build() {
        Set<String> live = new HashSet<>(outputs);
        List<Node> kept = new ArrayList<>();
        for (int i = nodes.size() - 1; i >= 0; i--) {
            Node n = nodes.get(i);
            if (live.contains(n.name())) {
                kept.addFirst(n);
                live.addAll(n.inputs());
            }
        }
        Map<String, NDArray> cs = new LinkedHashMap<>();
        constants.forEach((k, v) -> {
            if (live.contains(k)) cs.put(k, v);
        });
        return new Graph(source.name(), source.inputs(), cs, kept, outputs);
    }
}
