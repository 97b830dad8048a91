package dev.kiln.graph;

import dev.kiln.ir.KilnException;
import dev.kiln.te.ComputeDAG;
import dev.kiln.te.Tensor;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

/**
 * The computation of some nodes of a graph as one {@link ComputeDAG}: the values the nodes read
 * from outside become placeholders, each node's op is applied to its input tensors in order, and
 * the last node's output is the DAG's output. A single node gives the reference run's kernel; a
 * fused group gives the tuning task. {@link #arguments()} names, for each of
 * {@code dag().arguments()} in order, the graph value bound to it.
 *
 * @param dag       the computation
 * @param arguments graph value names in the order of {@code dag.arguments()} (inputs, then the output)
 * @param output    the name of the value the DAG computes
 */
public record GroupDag(ComputeDAG dag, List<String> arguments, String output) {
    public GroupDag {
        arguments = List.copyOf(arguments);
    }

    /** The DAG of {@code nodes} (in graph order; each reads only graph values or earlier nodes of the list). */
    public static GroupDag of(Graph g, List<Node> nodes) {
        if (nodes.isEmpty()) throw new KilnException("graph '" + g.name() + "': a group needs at least one node");
        Map<String, Tensor> tensors = new HashMap<>();
        Map<Tensor, String> names = new IdentityHashMap<>();
        Tensor out = null;
        for (Node n : nodes) {
            List<Tensor> ins = new ArrayList<>();
            for (String in : n.inputs()) {
                Tensor t = tensors.get(in);
                if (t == null) {
                    t = OpTensors.placeholder(g.value(in));
                    tensors.put(in, t);
                    names.put(t, in);
                }
                ins.add(t);
            }
            out = OpTensors.apply(n.name(), n.op(), ins);
            tensors.put(n.name(), out);
        }
        String outName = nodes.getLast().name();
        names.put(out, outName);
        ComputeDAG dag = ComputeDAG.of(out);
        List<String> args = new ArrayList<>();
        for (Tensor t : dag.arguments()) {
            String v = names.get(t);
            if (v == null)
                throw new IllegalStateException("argument " + t + " of group " + outName + " has no graph value");
            args.add(v);
        }
        return new GroupDag(dag, args, outName);
    }

    /** The names of the argument values other than the output (what the kernel reads). */
    public List<String> inputs() {
        return arguments.subList(0, arguments.size() - 1);
    }
}
