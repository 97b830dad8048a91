package dev.kiln.autoschedule.network;

import dev.kiln.graph.fuse.Partition;
import dev.kiln.runtime.NDArray;
import dev.kiln.schedule.Schedule;

/**
 * The weight layouts a task's kernel reads: the schedule to compile and, for each constant
 * argument, the array to bind (transformed once at build time when the layout was rewritten).
 */
final class WeightLayouts {
    private final Schedule schedule;

    private WeightLayouts(Schedule schedule) {
        this.schedule = schedule;
    }

    static WeightLayouts of(Partition p, NetworkTask t, Schedule s) {
        return new WeightLayouts(s);
    }

    static WeightLayouts unchanged(Schedule s) {
        return new WeightLayouts(s);
    }

    Schedule schedule() { return schedule; }

    boolean rewritten() { return false; }

    String note() { return ""; }

    /** The array to bind at argument {@code position} for the constant {@code name}. */
    NDArray constant(int position, String name, NDArray original) { return original; }
}
