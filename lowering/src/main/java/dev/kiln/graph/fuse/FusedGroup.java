package dev.kiln.graph.fuse;

import dev.kiln.graph.GroupDag;
import dev.kiln.graph.Node;
import dev.kiln.graph.OpPattern;
import java.util.List;
import java.util.stream.Collectors;

/**
 * Nodes of a graph that run as one kernel: in graph order, every value but the last node's read
 * only inside the group. {@link #dag()} is their computation as one ComputeDAG, whose last
 * argument is the group's output.
 *
 * @param id      the group's position in the partition (execution order)
 * @param nodes   the nodes, in graph order; the last one produces the group's output
 * @param pattern the most complex pattern among the nodes (OUT_EWISE_FUSABLE for an anchored group)
 * @param dag     the group's computation
 */
public record FusedGroup(int id, List<Node> nodes, OpPattern pattern, GroupDag dag) {
    public FusedGroup {
        nodes = List.copyOf(nodes);
    }

    /** The name of the value the group produces. */
    public String output() {
        return nodes.getLast().name();
    }

    /** The op kinds joined by '+', e.g. {@code conv2d+bias_add+add+relu}. */
    public String description() {
        return nodes.stream().map(n -> n.op().kind()).collect(Collectors.joining("+"));
    }

    /** Whether the group has a reduction (Ansor's "complex" task; the others are "simple"). */
    public boolean hasReduction() {
        return pattern.compareTo(OpPattern.COMM_REDUCE) >= 0;
    }

    /** Whether the group only reshapes its one input (its output can share the input's memory). */
    public boolean isReshapeOnly() {
        return nodes.stream().allMatch(n -> n.op() instanceof dev.kiln.graph.Op.Reshape)
                && dag.inputs().size() == 1;
    }
}
