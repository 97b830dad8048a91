package dev.kiln.autoschedule.measure;

import dev.kiln.autoschedule.SearchTask;
import dev.kiln.ir.KilnException;
import dev.kiln.lower.Lowering;
import dev.kiln.schedule.Schedule;
import dev.kiln.target.Target;
import dev.kiln.te.WideAccumulation;
import dev.kiln.tir.PrimFunc;
import java.util.List;

/** What every measurer (the CPU ones here, the CUDA module's) shares: the misuse checks and the reference program. */
public final class Measurers {
    private Measurers() {}

    /**
     * Throws if a schedule is for another workload than the task, or if the task is for another target than the
     * measurer's.
     */
    public static void checkTask(SearchTask task, List<Schedule> schedules, Target target) {
        if (!task.target().equals(target)) {
            throw new KilnException("task " + task.workloadKey() + " is for target '" + task.targetDescription()
                    + "' but this measurer measures on '" + target + "'");
        }
        String key = task.dag().workloadKey();
        for (int i = 0; i < schedules.size(); i++) {
            Schedule s = schedules.get(i);
            if (s.dag() != task.dag() && !s.dag().workloadKey().equals(key)) {
                throw new KilnException("schedule " + i + " of the batch is for workload "
                        + s.dag().workloadKey() + ", not for the task's " + key);
            }
        }
    }

    /**
     * The program the measurers check results against: the task's computation under the empty schedule, its float32
     * sums accumulated in float64 ({@link WideAccumulation}), so that a program which adds in another order is judged
     * against the exact total, not against the drift of one particular order.
     */
    public static PrimFunc referenceProgram(SearchTask task) {
        try {
            return Lowering.lower("reference", Schedule.empty(WideAccumulation.of(task.dag())));
        } catch (RuntimeException e) {
            throw new KilnException("task " + task.workloadKey()
                    + ": the default lowering fails, so there is nothing to " + "measure against: " + e.getMessage());
        }
    }
}
