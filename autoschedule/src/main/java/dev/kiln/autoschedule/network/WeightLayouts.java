package dev.kiln.autoschedule.network;

import dev.kiln.graph.Graph;
import dev.kiln.graph.fuse.Partition;
import dev.kiln.runtime.NDArray;
import dev.kiln.schedule.Schedule;
import dev.kiln.schedule.layout.LayoutRewrite;
import dev.kiln.te.Tensor;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * The weight layouts a task's kernel reads (Ansor's REWRITE_FOR_PRE_TRANSFORMED): the arguments of
 * the task's DAG that are constants in every group of the task are layout-free; the tuned schedule
 * is rewritten ({@link LayoutRewrite}) so the kernel reads them packed in the order of its tiles,
 * and each group's constants are packed once, here, at build time. Tuning records stay under the
 * original DAG's workload key; the rewrite happens only when the network is compiled.
 */
final class WeightLayouts {
    private final Schedule schedule;
    private final LayoutRewrite.Result result;
    private final Map<String, NDArray> packed = new HashMap<>();

    private WeightLayouts(Schedule schedule, LayoutRewrite.Result result) {
        this.schedule = schedule;
        this.result = result;
    }

    static WeightLayouts of(Partition p, NetworkTask t, Schedule s) {
        Graph g = p.graph();
        List<Tensor> args = s.dag().arguments();
        Set<Tensor> free = new HashSet<>();
        for (int a = 0; a < args.size() - 1; a++) {
            int pos = a;
            boolean constEverywhere = t.groups().stream().allMatch(gr -> g.isConstant(gr.dag().arguments().get(pos)));
            if (constEverywhere && args.get(a).isPlaceholder()) free.add(args.get(a));
        }
        if (free.isEmpty()) return unchanged(s);
        LayoutRewrite.Result r = LayoutRewrite.rewrite(s, free);
        return r.rewritten() ? new WeightLayouts(r.schedule(), r) : unchanged(s);
    }

    static WeightLayouts unchanged(Schedule s) {
        return new WeightLayouts(s, null);
    }

    /** The schedule to compile (on the rewritten DAG when a layout changed). */
    Schedule schedule() { return schedule; }

    boolean rewritten() { return result != null; }

    /** Which weights were packed, and how. */
    String note() {
        if (result == null) return "";
        return "weights packed for the tuned tiles: " + result.transforms().stream()
                .map(x -> "argument " + x.argument() + " " + x.layout()).collect(Collectors.joining("; "));
    }

    /** The array to bind at argument {@code position} for the constant {@code name}: packed once if its layout was rewritten. */
    NDArray constant(int position, String name, NDArray original) {
        if (result == null) return original;
        Optional<LayoutRewrite.Transform> tr = result.transform(position);
        if (tr.isEmpty()) return original;
        return packed.computeIfAbsent(name, n -> tr.get().apply(original));
    }
}
