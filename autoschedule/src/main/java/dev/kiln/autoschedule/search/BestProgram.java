package dev.kiln.autoschedule.search;

import dev.kiln.schedule.Schedule;
import java.util.Objects;

/**
 * The fastest program a search has measured.
 *
 * @param schedule the program
 * @param seconds  its measured time (the median of its repeats)
 * @param trial    which trial of the task found it, counting from 1 over the whole log
 */
public record BestProgram(Schedule schedule, double seconds, int trial) {
    public BestProgram {
        Objects.requireNonNull(schedule, "schedule");
    }

    /** Its speed in GFLOP/s for a computation of {@code flops}. */
    public double gflops(long flops) {
        return seconds > 0 ? flops / seconds / 1e9 : Double.POSITIVE_INFINITY;
    }
}
