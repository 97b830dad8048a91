package dev.kiln.autoschedule.measure;

import dev.kiln.autoschedule.SearchTask;
import dev.kiln.lower.GpuLimits;
import dev.kiln.lower.GpuPasses;
import dev.kiln.lower.Lowering;
import dev.kiln.schedule.Schedule;
import dev.kiln.target.CpuTarget;
import dev.kiln.target.CudaTarget;
import dev.kiln.target.Target;
import dev.kiln.tir.PrimFunc;

/**
 * How a measurer turns a schedule into the loop program it compiles. Any exception it throws makes
 * the measurement a {@link MeasureError#LOWER}. The default for a target is {@link #forTarget};
 * tests and experiments pass their own (a pass under study, a deliberately broken program).
 */
@FunctionalInterface
public interface ScheduleLowerer {

    /** The name measured programs get. */
    String FUNCTION_NAME = "kiln_measured";

    PrimFunc lower(SearchTask task, Schedule schedule);

    /**
     * The standard pipeline for {@code target}: {@link Lowering#pipeline(Target)} on a CPU (with the fast-math
     * passes where the target contracts and reassociates floats); on CUDA,
     * {@link GpuPasses#lower} with the target's thread, shared-memory and warp limits and the
     * task's largest vthread extent (8 if the task does not say).
     */
    static ScheduleLowerer forTarget(Target target) {
        return switch (target) {
            case CpuTarget c ->
                (task, schedule) -> Lowering.lower(FUNCTION_NAME, schedule, c, Lowering.Options.defaults());
            case CudaTarget c ->
                (task, schedule) ->
                        GpuPasses.lower(FUNCTION_NAME, schedule, gpuLimits(c, task), Lowering.Options.defaults());
        };
    }

    private static GpuLimits gpuLimits(CudaTarget c, SearchTask task) {
        int vthread = task.hardware().maxVthreadExtent() > 0 ? task.hardware().maxVthreadExtent() : 8;
        return new GpuLimits(c.maxThreadsPerBlock(), c.sharedMemPerBlock(), c.warpSize(), vthread);
    }
}
