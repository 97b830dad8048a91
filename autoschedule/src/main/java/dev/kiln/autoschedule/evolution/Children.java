package dev.kiln.autoschedule.evolution;

import dev.kiln.autoschedule.Candidate;
import dev.kiln.autoschedule.SearchTask;
import dev.kiln.autoschedule.annotate.NestedParallel;
import dev.kiln.ir.KilnException;
import dev.kiln.schedule.CacheReadStep;
import dev.kiln.schedule.CacheWriteStep;
import dev.kiln.schedule.RfactorStep;
import dev.kiln.schedule.Step;
import java.util.List;

/** Making a child program from an edited step list: replay, bound inference and the CPU validity checks. */
final class Children {
    private Children() {}

    /** The candidate of {@code steps}, or null when they do not replay, bounds cannot be inferred, or parallel loops nest. */
    static Candidate of(SearchTask task, List<Step> steps) {
        Candidate c;
        try {
            c = Candidate.of(task.dag(), steps);
        } catch (KilnException | ArithmeticException e) {
            return null;
        }
        if (!task.isGpu() && NestedParallel.has(c.state())) return null;
        return c;
    }

    /** Whether a step adds a stage (and so renumbers the stages after it). */
    static boolean addsStage(Step s) {
        return s instanceof CacheWriteStep || s instanceof CacheReadStep || s instanceof RfactorStep;
    }
}
