package dev.kiln.autoschedule.measure;

import dev.kiln.autoschedule.SearchTask;
import dev.kiln.ir.Cast;
import dev.kiln.ir.Expr;
import dev.kiln.ir.Exprs;
import dev.kiln.ir.KilnException;
import dev.kiln.lower.Lowering;
import dev.kiln.schedule.Schedule;
import dev.kiln.target.Target;
import dev.kiln.te.ComputeDAG;
import dev.kiln.te.ComputeOp;
import dev.kiln.te.Operation;
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
     * Whether the computation casts a float value to an integer type anywhere (a quantize, a requantize): its integer
     * outputs are floats rounded, and a program may put one a step from the reference where the float value lies
     * within float32 rounding of a half-way point (FMA contraction, another summation order), so the measurers
     * check them within one step ({@code ArgumentSpec.rounded}); any other integer output must match exactly.
     */
    public static boolean roundsFloats(ComputeDAG dag) {
        boolean[] found = {false};
        for (Operation op : dag.ops()) {
            if (!(op instanceof ComputeOp c)) continue;
            for (Expr body : c.bodies()) {
                Exprs.forEach(body, e -> {
                    if (e instanceof Cast cast
                            && cast.dtype().isInt()
                            && cast.value().dtype().isFloat()) found[0] = true;
                });
            }
        }
        return found[0];
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
