package dev.kiln.autoschedule.scheduler;

import java.util.List;

/**
 * What a {@link SchedulerLoop} run ends with.
 *
 * @param tasks          every task at the end, by index
 * @param order          the task of every round, in order (warm-up included)
 * @param history        the objective after every round (and after restoring, when the log had trials)
 * @param perRound       programs per round: {@code min(measuresPerRound, trials / #tasks)}
 * @param trials         trials of all tasks at the end, restored ones included
 * @param restoredTrials trials that were in the log at the start
 * @param objective      the objective at the end, in seconds ({@link Double#NaN} when a task has no valid program)
 * @param stop           why the run stopped
 * @param elapsedSeconds how long the run took
 * @param overlapped     whether rounds overlapped ({@link TaskSchedulerOptions#overlapRounds()}: always, or by default
 *                       when every task's measurer is asynchronous)
 */
public record SchedulerTrace(
        List<TaskSummary> tasks,
        List<Integer> order,
        List<ObjectivePoint> history,
        int perRound,
        int trials,
        int restoredTrials,
        double objective,
        SchedulerStop stop,
        double elapsedSeconds,
        boolean overlapped) {
    public SchedulerTrace {
        tasks = List.copyOf(tasks);
        order = List.copyOf(order);
        history = List.copyOf(history);
    }
}
