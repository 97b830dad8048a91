package dev.kiln.autoschedule.network;

import dev.kiln.autoschedule.SearchTask;
import dev.kiln.autoschedule.tune.AutoSchedule;
import dev.kiln.graph.fuse.FusedGroup;
import dev.kiln.graph.fuse.Partition;
import dev.kiln.target.CpuTarget;
import dev.kiln.target.Target;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The tuning tasks of a partitioned network (Ansor's {@code extract_tasks} with
 * {@code include_simple_tasks}): fused groups with the same workload key are one task whose weight
 * is how many there are. Reshape-only groups are left out (the executor runs them as views of
 * their input's memory, no kernel). Every other group, simple (elementwise, injective) or complex,
 * becomes a task, so that the whole network is tuned and not only its convolutions.
 */
final class TaskExtraction {
    private TaskExtraction() {}

    /** The tasks without layout-free arguments (every weight read in its original layout). */
    public static List<NetworkTask> extract(Partition p, Target target) {
        return extract(p, target, false);
    }

    /**
     * The tasks of {@code p} on {@code target}. With {@code layoutRewrite} on a CPU, each task's
     * arguments that are constants in every one of its groups are layout-free
     * ({@link SearchTask#withLayoutFree}): its programs are measured, and later built, with those
     * weights packed for their loops.
     */
    public static List<NetworkTask> extract(Partition p, Target target, boolean layoutRewrite) {
        Map<String, List<FusedGroup>> byKey = new LinkedHashMap<>();
        for (FusedGroup g : p.groups()) {
            if (MemoryPlan.isView(p, g)) continue;
            byKey.computeIfAbsent(g.dag().dag().workloadKey(), k -> new ArrayList<>())
                    .add(g);
        }
        List<NetworkTask> tasks = new ArrayList<>();
        for (List<FusedGroup> gs : byKey.values()) {
            FusedGroup first = gs.getFirst();
            SearchTask t = AutoSchedule.task(first.dag().dag(), target);
            if (layoutRewrite && target instanceof CpuTarget) t = t.withLayoutFree(constantArguments(p, t, gs));
            String description =
                    first.description() + " " + p.graph().value(first.output()).shape();
            String tag = first.hasReduction() ? first.description() : "";
            tasks.add(new NetworkTask(tasks.size(), t, gs, description, tag));
        }
        return tasks;
    }

    /** The positions of the task's input placeholders that hold a constant in every group. */
    private static List<Integer> constantArguments(Partition p, SearchTask t, List<FusedGroup> groups) {
        List<Integer> out = new ArrayList<>();
        int inputs = t.dag().arguments().size() - t.dag().outputs().size();
        for (int a = 0; a < inputs; a++) {
            int pos = a;
            if (!t.dag().arguments().get(a).isPlaceholder()) continue;
            if (groups.stream()
                    .allMatch(g -> p.graph().isConstant(g.dag().arguments().get(pos)))) out.add(a);
        }
        return out;
    }
}
