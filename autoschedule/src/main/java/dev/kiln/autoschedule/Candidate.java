package dev.kiln.autoschedule;

import dev.kiln.schedule.LoopState;
import dev.kiln.schedule.Schedule;
import dev.kiln.schedule.StatePrinter;
import dev.kiln.schedule.Step;
import dev.kiln.te.ComputeDAG;
import java.util.List;
import java.util.Objects;

/**
 * A concrete program of the search space: its schedule (what is measured and logged), its loop
 * state with inferred bounds (what features and rules look at), and its key, the state printed
 * the way Ansor prints it. Two candidates with the same key have the same loop structure and
 * count as one program (measured once, kept once in a population).
 */
public record Candidate(Schedule schedule, LoopState state, String key) {
    public Candidate {
        Objects.requireNonNull(schedule, "schedule");
        Objects.requireNonNull(state, "state");
        Objects.requireNonNull(key, "key");
    }

    /** The candidate of a bound-inferred state whose steps are its whole history. */
    public static Candidate ofInferred(LoopState inferred) {
        return new Candidate(new Schedule(inferred.dag(), inferred.steps()), inferred, StatePrinter.print(inferred));
    }

    /** Replays {@code steps} on the DAG and infers bounds; throws if a step is illegal or a size undecided. */
    public static Candidate of(ComputeDAG dag, List<Step> steps) {
        return ofInferred(InferBound.apply(new Schedule(dag, steps).replay()));
    }

    /** The candidate of a schedule (for instance one read from a tuning log). */
    public static Candidate of(Schedule schedule) {
        return of(schedule.dag(), schedule.steps());
    }
}
