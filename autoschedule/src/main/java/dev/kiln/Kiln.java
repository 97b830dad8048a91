package dev.kiln;

import dev.kiln.autoschedule.tune.AutoSchedule;
import dev.kiln.ir.KilnException;
import dev.kiln.schedule.Schedule;
import dev.kiln.schedule.SimpleGpuSchedule;
import dev.kiln.target.Backend;
import dev.kiln.target.CompiledKernel;
import dev.kiln.target.CpuTarget;
import dev.kiln.target.CudaTarget;
import dev.kiln.target.Target;
import dev.kiln.te.ComputeDAG;
import dev.kiln.te.Tensor;

/**
 * The shortest way from a computation to a kernel Java calls: compile it without tuning.
 *
 * <pre>{@code
 * try (CompiledKernel k = Kiln.compile(C, Target.CPU)) {
 *     k.call(a, b, c);                    // inputs in the order the DAG lists them, then the outputs
 * }
 * }</pre>
 *
 * <p>On a CPU (LLVM, or {@link Target#JVM} for bytecode) the program is the default lowering: the
 * computation's loops as written, no tiling, no parallel loops. On CUDA it is
 * {@link SimpleGpuSchedule}: every stage one kernel, its points spread over blocks of threads.
 * Both are correct and slow next to a tuned program; {@code AutoSchedule.tune(C, target)} finds a
 * fast one, and {@link #compile(Schedule, Target)} compiles a schedule written by hand. The backend
 * is the one on the class path that supports the target ({@link Backend#forTarget}); none is an
 * error naming the target, never a silent fallback.
 */
public final class Kiln {
    /** Threads per block of the untuned GPU program. */
    private static final int GPU_THREADS = 256;

    private Kiln() {}

    /** Compiles the computation of {@code output} (and everything it reads) for {@code target}, untuned. */
    public static CompiledKernel compile(Tensor output, Target target) {
        if (output == null) throw new KilnException("Kiln.compile: the output tensor is null");
        return compile(ComputeDAG.of(output), target);
    }

    /** Compiles {@code dag} (all its outputs) for {@code target}, untuned. */
    public static CompiledKernel compile(ComputeDAG dag, Target target) {
        if (dag == null) throw new KilnException("Kiln.compile: the computation (dag) is null");
        if (target == null) throw new KilnException("Kiln.compile: the target is null");
        Schedule s =
                switch (target) {
                    case CpuTarget c -> Schedule.empty(dag);
                    case CudaTarget c -> SimpleGpuSchedule.of(dag, Math.min(GPU_THREADS, c.maxThreadsPerBlock()));
                };
        return compile(s, target);
    }

    /**
     * Compiles a schedule (written by hand with {@code ScheduleBuilder}, or read from a log) for
     * {@code target}, lowered with the target's pipeline (the GPU passes for CUDA).
     */
    public static CompiledKernel compile(Schedule schedule, Target target) {
        if (schedule == null) throw new KilnException("Kiln.compile: the schedule is null");
        if (target == null) throw new KilnException("Kiln.compile: the target is null");
        String name = "kiln_" + schedule.dag().outputs().getFirst().name();
        return AutoSchedule.compile(schedule, target, name);
    }
}
