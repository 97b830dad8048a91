package dev.kiln.autoschedule.scheduler;

import java.io.PrintStream;

/** Told by the task scheduler after every round (warm-up included), for progress displays and plots. */
@FunctionalInterface
public interface SchedulerListener {

    /** A round has been measured; {@code snapshot} is the state after it. */
    void roundDone(SchedulerSnapshot snapshot);

    /** Prints the progress table ({@link SchedulerSnapshot#table()}) to {@code out} after every round. */
    static SchedulerListener table(PrintStream out) {
        return s -> {
            out.print(s.table());
            out.flush();
        };
    }
}
