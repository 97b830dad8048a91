package dev.kiln.graph.fuse;

import dev.kiln.graph.Graph;
import java.util.List;
import java.util.Locale;

/**
 * A graph cut into fused groups, in an order that runs every group after the groups it reads
 * from. {@link #toString()} is the readable printout of the partition.
 */
public record Partition(Graph graph, List<FusedGroup> groups) {
    public Partition {
        groups = List.copyOf(groups);
    }

    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder("partition of graph ")
                .append(graph.name())
                .append(": ")
                .append(graph.nodes().size())
                .append(" nodes in ")
                .append(groups.size())
                .append(" groups\n");
        for (FusedGroup g : groups) {
            sb.append(String.format(
                    Locale.ROOT,
                    "  #%-3d %-40s -> %s%s  reads %s%n",
                    g.id(),
                    g.description(),
                    graph.value(g.output()),
                    g.hasReduction() ? "" : " (simple)",
                    g.dag().inputs()));
        }
        return sb.toString();
    }
}
