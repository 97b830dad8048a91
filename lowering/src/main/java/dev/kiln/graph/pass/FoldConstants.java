package dev.kiln.graph.pass;

import dev.kiln.graph.Graph;
import dev.kiln.graph.GraphBuilder;
import dev.kiln.graph.GroupDag;
import dev.kiln.graph.Node;
import dev.kiln.graph.NodeRunner;
import dev.kiln.runtime.NDArray;

/**
 * Evaluates, once, every node whose inputs are all constants (TVM's FoldConstant), in the
 * reference interpreter, and replaces it by a constant of the same name: a weight reshaped or
 * transposed, a scale computed from other weights. Nodes are visited in order, so a chain of
 * constant nodes folds completely.
 */
public final class FoldConstants {
    private FoldConstants() {}

    public static Graph apply(Graph g) {
        GraphEditor e = new GraphEditor(g);
        boolean changed = false;
        try (NodeRunner runner = NodeRunner.interpreter()) {
            for (int i = 0; i < e.nodes.size(); i++) {
                Node n = e.nodes.get(i);
                if (!n.inputs().stream().allMatch(e.constants::containsKey)) continue;
                Graph current = new Graph(
                        g.name(), g.inputs(), e.constants, e.nodes.subList(0, i + 1), java.util.List.of(n.name()));
                GroupDag gd = GroupDag.of(current, java.util.List.of(n));
                NDArray out =
                        GraphBuilder.autoArray(n.output().dtype(), n.output().dims());
                NDArray[] args = new NDArray[gd.arguments().size()];
                for (int a = 0; a < args.length - 1; a++)
                    args[a] = e.constants.get(gd.arguments().get(a));
                args[args.length - 1] = out;
                runner.run(gd.dag(), args);
                e.nodes.remove(i--);
                e.constants.put(n.name(), out);
                changed = true;
            }
        }
        return changed ? e.build() : g;
    }
}
