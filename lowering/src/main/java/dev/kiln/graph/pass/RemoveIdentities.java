package dev.kiln.graph.pass;

import dev.kiln.graph.Graph;
import dev.kiln.graph.Node;
import dev.kiln.graph.Op;
import java.util.List;
import java.util.stream.IntStream;

/**
 * Drops nodes that do nothing: a reshape to the shape it already has, a transpose by the identity
 * permutation, a concat of one input; and makes a reshape of a reshape read the original value.
 * Readers of a dropped node read its input instead. A graph output is never dropped (it has to
 * exist as a value of its own).
 */
public final class RemoveIdentities {
    private RemoveIdentities() {}

    public static Graph apply(Graph g) {
        GraphEditor e = new GraphEditor(g);
        for (int i = 0; i < e.nodes.size(); i++) {
            Node n = e.nodes.get(i);
            String in = n.inputs().getFirst();
            boolean identity =
                    switch (n.op()) {
                        case Op.Reshape r ->
                            g.value(in).shape().equals(n.output().shape());
                        case Op.Transpose t ->
                            t.perm()
                                    .equals(IntStream.range(0, t.perm().size())
                                            .boxed()
                                            .toList());
                        case Op.Concat c -> n.inputs().size() == 1;
                        case Op.StridedSlice s ->
                            g.value(in).shape().equals(n.output().shape())
                                    && s.step().stream().allMatch(st -> st == 1);
                        default -> false;
                    };
            if (identity && !e.outputs.contains(n.name())) {
                e.replaceUses(n.name(), in);
                e.nodes.remove(i--);
                continue;
            }
            if (n.op() instanceof Op.Reshape) {
                Node p = e.nodes.stream()
                        .filter(x -> x.name().equals(in))
                        .findFirst()
                        .orElse(null);
                if (p != null && p.op() instanceof Op.Reshape) {
                    e.nodes.set(i, new Node(n.op(), List.of(p.inputs().getFirst()), n.output()));
                }
            }
        }
        return e.build();
    }
}
