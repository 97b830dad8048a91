package dev.kiln.autoschedule.mutation;

import dev.kiln.autoschedule.Candidate;
import dev.kiln.autoschedule.SearchTask;
import dev.kiln.autoschedule.annotate.CheckJvmTiles;
import dev.kiln.autoschedule.annotate.CheckTensorizedTiles;
import dev.kiln.autoschedule.annotate.InitChangeComputeLocation;
import dev.kiln.autoschedule.annotate.InvalidSample;
import dev.kiln.autoschedule.annotate.NestedParallel;
import dev.kiln.autoschedule.gpu.CheckGpuLimits;
import dev.kiln.ir.KilnException;
import dev.kiln.schedule.CacheReadStep;
import dev.kiln.schedule.CacheWriteStep;
import dev.kiln.schedule.RfactorStep;
import dev.kiln.schedule.Step;
import java.util.List;

/**
 * Making a child program from an edited step list (a mutation's or a crossover's): replay, bound
 * inference and the target's validity checks.
 */
public final class Children {
    private Children() {}

    /**
     * The candidate of {@code steps}, or null when they do not replay, bounds cannot be inferred, parallel loops nest
     * (CPU), a depthwise conv's or a pooling's padding is computed whole at once where it could be computed inside
     * its consumer (CPU, {@link InitChangeComputeLocation#padsWholeInputAtOnce}), a tensorized register tile does not
     * fit the vector registers (CPU, {@link CheckTensorizedTiles}), the JVM backend cannot keep its
     * register tile in vector locals ({@link CheckJvmTiles}, JVM target) or the program breaks the device's limits
     * ({@link CheckGpuLimits}).
     */
    public static Candidate of(SearchTask task, List<Step> steps) {
        Candidate c;
        try {
            c = Candidate.of(task.dag(), steps);
        } catch (KilnException | ArithmeticException e) {
            return null;
        }
        if (!task.target().kind().isGpu()) {
            if (NestedParallel.has(c.state())) return null;
            if (InitChangeComputeLocation.padsWholeInputAtOnce(c.state())) return null;
            if (CheckTensorizedTiles.refusal(c.state(), task.hardware().vectorRegisters()) != null) return null;
            if (!CheckJvmTiles.isJvm(task.target()) || "false".equals(System.getProperty("kiln.search.jvmRules"))) {
                return c;
            }
            try {
                JVM_TILES.apply(task, c.state(), null);
            } catch (InvalidSample | KilnException | ArithmeticException e) {
                return null;
            }
            return c;
        }
        try {
            GPU_LIMITS.apply(task, c.state(), null);
        } catch (InvalidSample | KilnException | ArithmeticException e) {
            return null;
        }
        return c;
    }

    private static final CheckGpuLimits GPU_LIMITS = new CheckGpuLimits();
    private static final CheckJvmTiles JVM_TILES = new CheckJvmTiles();

    /** Whether a step adds a stage (and so renumbers the stages after it). */
    public static boolean addsStage(Step s) {
        return s instanceof CacheWriteStep || s instanceof CacheReadStep || s instanceof RfactorStep;
    }
}
