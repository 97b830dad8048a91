package dev.kiln.autoschedule.network;

import dev.kiln.autoschedule.SearchTask;
import dev.kiln.runtime.NDArray;
import dev.kiln.schedule.Schedule;
import dev.kiln.schedule.layout.LayoutRewrite;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * The weight layouts a task's kernel reads (Ansor's REWRITE_FOR_PRE_TRANSFORMED): a task extracted
 * with the layout rewrite has layout-free arguments (constants in every group of the task,
 * {@link TaskExtraction}); its programs were measured with those weights packed in the order of
 * their tiles ({@link SearchTask#rewriteLayouts}), so the tuned schedule is compiled the same way
 * and each group's constants are packed once, here, at build time.
 */
final class WeightLayouts {
    private final Schedule schedule;
    private final LayoutRewrite.Result result;
    private final List<LayoutRewrite.Skipped> skipped;
    private final Map<String, NDArray> packed = new HashMap<>();

    private WeightLayouts(Schedule schedule, LayoutRewrite.Result result, List<LayoutRewrite.Skipped> skipped) {
        this.schedule = schedule;
        this.result = result;
        this.skipped = List.copyOf(skipped);
    }

    /**
     * The layouts of task {@code t}'s kernel for its tuned schedule {@code s} (unchanged when it has no layout-free
     * argument).
     */
    static WeightLayouts of(NetworkTask t, Schedule s) {
        LayoutRewrite.Result r = t.task().rewriteLayouts(s);
        return r.rewritten() || !r.folds().isEmpty()
                ? new WeightLayouts(r.schedule(), r, r.skipped())
                : new WeightLayouts(s, null, r.skipped());
    }

    static WeightLayouts unchanged(Schedule s) {
        return new WeightLayouts(s, null, List.of());
    }

    /** The schedule to compile (on the rewritten DAG when a layout changed). */
    Schedule schedule() {
        return schedule;
    }

    boolean rewritten() {
        return result != null;
    }

    /** Which weights were packed, and how. */
    String note() {
        if (result == null) return "";
        return "weights packed for the tuned tiles: "
                + result.transforms().stream()
                        .map(x -> "argument " + x.argument() + " " + x.layout())
                        .collect(Collectors.joining("; "));
    }

    /**
     * The layout-free weights of rank 2 or more that this schedule reads in their own layout, and why (its loops walk
     * them in their layout, a cache_read copies them, ...): empty when every such weight was packed. Vectors (biases)
     * are left out: packing one never changes how it is read.
     */
    String skippedNote() {
        String s = skipped.stream()
                .filter(x -> x.placeholder().rank() > 1)
                .map(LayoutRewrite.Skipped::toString)
                .collect(Collectors.joining("; "));
        return s.isEmpty() ? "" : "weights kept in their layout: " + s;
    }

    /**
     * The array to bind at argument {@code position} for the constant {@code name}: packed once if its layout was
     * rewritten.
     */
    NDArray constant(int position, String name, NDArray original) {
        if (result == null || !result.changes(position)) return original;
        return packed.computeIfAbsent(name, n -> result.transformArgument(position, original));
    }
}
