package dev.kiln.autoschedule;

import dev.kiln.ir.KilnException;
import dev.kiln.te.ComputeDAG;
import java.util.Objects;

/**
 * One tuning problem: a computation, the target it is tuned for (a description string such as
 * {@code "llvm -mcpu=skylake-avx512"} or {@code "cuda -arch=sm_80"}, which tuning logs record
 * and compare), the target's hardware parameters, and the workload key that names the
 * computation in logs (by default the DAG's structural key).
 */
public record SearchTask(ComputeDAG dag, String target, HardwareParams hardware, String workloadKey) {
    public SearchTask {
        Objects.requireNonNull(dag, "dag");
        Objects.requireNonNull(hardware, "hardware");
        if (target == null || target.isBlank()) throw new KilnException("a search task needs a target description");
        if (workloadKey == null || workloadKey.isBlank()) throw new KilnException("a search task needs a workload key");
    }

    /** A task for {@code dag} on {@code target}, keyed by the DAG's workload key. */
    public static SearchTask of(ComputeDAG dag, String target, HardwareParams hardware) {
        return new SearchTask(dag, target, hardware, dag.workloadKey());
    }

    /** A CPU task ("llvm") with the given hardware parameters. */
    public static SearchTask cpu(ComputeDAG dag, HardwareParams hardware) {
        return of(dag, "llvm", hardware);
    }

    /** A CPU task for this machine ({@link HardwareParams#thisCpu()}). */
    public static SearchTask thisCpu(ComputeDAG dag) {
        return cpu(dag, HardwareParams.thisCpu());
    }

    /** Whether the target is a GPU (its description starts with {@code cuda}). */
    public boolean isGpu() {
        String t = target.strip();
        return t.equals("cuda") || t.startsWith("cuda ") || t.startsWith("nvptx");
    }
}
