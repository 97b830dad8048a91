package dev.kiln.autoschedule.network;

import dev.kiln.autoschedule.SearchTask;
import dev.kiln.graph.fuse.FusedGroup;
import java.util.List;

/**
 * One tuning task of a network: a distinct fused subgraph (by workload key) and the groups of the
 * partition that compute it.
 *
 * @param id          position in the task list
 * @param task        the search task (the first group's DAG on the target)
 * @param groups      the fused groups with this workload, in execution order
 * @param description the group's op kinds, e.g. {@code conv2d+bias_add+relu}, and its output shape
 * @param tag         the similarity tag for the task scheduler: the op kinds of a complex task, "" for a simple one
 */
public record NetworkTask(int id, SearchTask task, List<FusedGroup> groups, String description, String tag) {
    public NetworkTask {
        groups = List.copyOf(groups);
    }

    /** How often the subgraph occurs in the network (Ansor's task weight). */
    public int weight() {
        return groups.size();
    }

    /** Floating-point operations of one run of the subgraph. */
    public long flops() {
        return task.dag().flopCount();
    }
}
