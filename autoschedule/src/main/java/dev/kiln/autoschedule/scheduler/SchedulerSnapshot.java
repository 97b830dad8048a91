package dev.kiln.autoschedule.scheduler;

import java.util.List;
import java.util.Locale;

/**
 * The scheduler's state after a round, for a {@link SchedulerListener}: every task, the objective
 * and the trials so far.
 *
 * @param round          rounds run by this scheduler so far (warm-up included)
 * @param tunedTask      the task of the round just run
 * @param tasks          every task, by index
 * @param objective      the objective in seconds ({@link Double#NaN} while a task has no valid program)
 * @param trials         trials of all tasks so far
 * @param elapsedSeconds seconds since the scheduler started
 */
record SchedulerSnapshot(
        int round, int tunedTask, List<TaskSummary> tasks, double objective, int trials, double elapsedSeconds) {
    public SchedulerSnapshot {
        tasks = List.copyOf(tasks);
    }

    /**
     * The progress table (Ansor's PrintTableInfo, with Kiln's extra columns): per task its id,
     * description, weight, trials, best latency (ms), GFLOP/s (an integer task's GOP/s, marked
     * {@code GOP}), weight x latency (ms) and its
     * share of the sum of weight x latency over tasks, then the objective and total trials.
     */
    public String table() {
        StringBuilder sb = new StringBuilder();
        String head = String.format(
                Locale.ROOT,
                "| %4s | %-28s | %7s | %6s | %12s | %10s | %14s | %6s | %s |",
                "ID",
                "Task",
                "Weight",
                "Trials",
                "Latency (ms)",
                "GFLOP/s",
                "Weighted (ms)",
                "Share",
                "State");
        sb.append(head).append('\n').append("-".repeat(head.length())).append('\n');
        double total = 0;
        boolean all = true;
        for (TaskSummary t : tasks) {
            if (t.hasLatency()) total += t.weightedSeconds();
            else all = false;
        }
        for (TaskSummary t : tasks) {
            String name = t.name().length() > 28 ? t.name().substring(0, 25) + "..." : t.name();
            sb.append(String.format(
                    Locale.ROOT,
                    "| %4d | %-28s | %7s | %6d | %12s | %10s | %14s | %6s | %s |%n",
                    t.index(),
                    name,
                    trim(t.weight()),
                    t.trials(),
                    t.hasLatency() ? String.format(Locale.ROOT, "%.4f", t.bestSeconds() * 1e3) : "-",
                    t.hasLatency()
                            ? String.format(Locale.ROOT, "%.2f", t.gflops())
                                    + (t.rateUnit().equals("GFLOP/s") ? "" : " GOP")
                            : "-",
                    t.hasLatency() ? String.format(Locale.ROOT, "%.4f", t.weightedSeconds() * 1e3) : "-",
                    t.hasLatency() && all && total > 0
                            ? String.format(Locale.ROOT, "%.1f%%", 100 * t.weightedSeconds() / total)
                            : "-",
                    t.status() == TaskStatus.ALIVE
                            ? (t.index() == tunedTask ? "tuned" : "")
                            : t.status().name().toLowerCase(Locale.ROOT)));
        }
        sb.append("-".repeat(head.length())).append('\n');
        sb.append(String.format(
                Locale.ROOT,
                "Estimated total latency: %s ms\tTrials: %d\tUsed time: %.0f s\tRound: %d%n",
                Double.isNaN(objective) ? "N/A" : String.format(Locale.ROOT, "%.4f", objective * 1e3),
                trials,
                elapsedSeconds,
                round));
        return sb.toString();
    }

    private static String trim(double w) {
        return w == Math.rint(w) && Math.abs(w) < 1e9 ? Long.toString((long) w) : String.format(Locale.ROOT, "%.3g", w);
    }
}
