package dev.kiln.graph;

import dev.kiln.ir.KilnException;
import dev.kiln.runtime.NDArray;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Runs a graph op by op, each node its own default-lowered kernel ({@link NodeRunner}): no
 * fusion, no tuning, no layout rewrite, no memory reuse. What it computes is the definition of a
 * correct result for the compiled network.
 */
public final class ReferenceExecutor {
    private ReferenceExecutor() {}

    /**
     * Runs {@code g} on its inputs (in the order of {@link Graph#inputs()}); returns its outputs, fresh arrays the
     * caller closes.
     */
    public static List<NDArray> run(Graph g, NodeRunner runner, NDArray... inputs) {
        checkInputs(g, inputs);
        Map<String, NDArray> env = new HashMap<>(g.constants());
        for (int i = 0; i < inputs.length; i++) env.put(g.inputs().get(i).name(), inputs[i]);
        Map<String, NDArray> made = new LinkedHashMap<>();
        try {
            for (Node n : g.nodes()) {
                GroupDag gd = GroupDag.of(g, List.of(n));
                NDArray out = NDArray.allocate(n.output().dtype(), n.output().dims());
                made.put(n.name(), out);
                env.put(n.name(), out);
                NDArray[] args = new NDArray[gd.arguments().size()];
                for (int i = 0; i < args.length; i++)
                    args[i] = env.get(gd.arguments().get(i));
                try {
                    runner.run(gd.dag(), args);
                } catch (KilnException e) {
                    throw new KilnException("reference run of graph '" + g.name() + "', node '" + n.name() + "' ("
                            + n.op().kind() + "): " + e.getMessage());
                }
            }
            List<NDArray> outs = new ArrayList<>();
            for (String o : g.outputs()) {
                NDArray a = env.get(o);
                outs.add(made.containsKey(o) ? made.remove(o) : a.copy());
            }
            return outs;
        } finally {
            made.values().forEach(NDArray::close);
        }
    }

    /** Checks that {@code inputs} match the graph's inputs in count, dtype and shape; throws naming the input. */
    public static void checkInputs(Graph g, NDArray... inputs) {
        if (inputs.length != g.inputs().size()) {
            throw new KilnException("graph '" + g.name() + "' takes "
                    + g.inputs().size() + " input(s) " + g.inputs() + ", got " + inputs.length);
        }
        for (int i = 0; i < inputs.length; i++) {
            Value v = g.inputs().get(i);
            NDArray a = inputs[i];
            if (a == null)
                throw new KilnException("graph '" + g.name() + "': input " + i + " '" + v.name() + "' is null");
            if (a.dtype() != v.dtype() || !Arrays.equals(a.shape(), v.dims())) {
                throw new KilnException("graph '" + g.name() + "': input " + i + " '" + v.name() + "' must be "
                        + v.dtype() + " " + v.shape() + ", got " + a);
            }
        }
    }
}
