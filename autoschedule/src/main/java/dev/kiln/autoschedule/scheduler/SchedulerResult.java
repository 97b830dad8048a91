package dev.kiln.autoschedule.scheduler;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * What a {@link TaskScheduler} run ends with: every task's best program and counts, the
 * objective after every round (to plot estimated end-to-end latency against trials), the order in
 * which tasks were tuned, and why it stopped.
 *
 * @param tasks          one result per task, in the order given
 * @param trace          the scheduler's own record: order of rounds, objective history, totals
 */
public record SchedulerResult(List<TaskResult> tasks, SchedulerTrace trace) {
    public SchedulerResult {
        tasks = List.copyOf(tasks);
    }

    /** The objective at the end, in seconds ({@link Double#NaN} when a task has no valid program). */
    public double objective() {
        return trace.objective();
    }

    /** The objective after every round (and after the restore): trials, latency, elapsed seconds. */
    public List<ObjectivePoint> history() {
        return trace.history();
    }

    /** Trials of all tasks at the end, restored ones included. */
    public int trials() {
        return trace.trials();
    }

    /** Trials this run measured. */
    public int newTrials() {
        return trace.trials() - trace.restoredTrials();
    }

    /** Why the run stopped. */
    public SchedulerStop stop() {
        return trace.stop();
    }

    /** The tasks that are dead (and why: {@link TaskResult#status()}, {@link TaskSummary#message()}). */
    public List<TaskResult> deadTasks() {
        return tasks.stream().filter(t -> t.status().dead()).toList();
    }

    /** The final progress table. */
    public String table() {
        return new SchedulerSnapshot(
                        trace.order().size(),
                        -1,
                        trace.tasks(),
                        trace.objective(),
                        trace.trials(),
                        trace.elapsedSeconds())
                .table();
    }

    /** Writes the history as Ansor's total_latency.tsv (one line per point, latency in ms, "N/A" while unknown). */
    public void writeTsv(Path file) {
        StringBuilder sb = new StringBuilder();
        for (ObjectivePoint p : history()) sb.append(p.tsvLine()).append('\n');
        try {
            Files.writeString(file, sb, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + file, e);
        }
    }
}
