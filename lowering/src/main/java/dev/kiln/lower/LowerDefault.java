package dev.kiln.lower;

import dev.kiln.ir.KilnException;
import dev.kiln.schedule.LoopState;
import dev.kiln.schedule.ScheduleLowering;
import dev.kiln.te.ComputeDAG;
import dev.kiln.te.Tensor;
import dev.kiln.tir.PrimFunc;
import java.util.LinkedHashSet;
import java.util.List;

/**
 * The default lowering of a computation, before any schedule: every operation is computed at
 * root, in topological order, over its own loop nest; intermediates are allocated for the whole
 * function; a reduction initialises its output to the reducer's identity and then updates it
 * over the reduce loops. It is the lowering of the empty schedule.
 *
 * <pre>
 * for i, j:                 # spatial axes
 *   C[i, j] = identity
 *   for k:                  # reduce axes
 *     if cond:              # only when the reduction has a condition
 *       C[i, j] = combine(C[i, j], source)
 * </pre>
 */
public final class LowerDefault {
    private LowerDefault() {}

    /** Lowers a DAG; the parameters are its inputs, then its outputs ({@link ComputeDAG#arguments()}). */
    public static PrimFunc lower(String name, ComputeDAG dag) {
        requireName(name);
        if (dag == null) throw new KilnException("function '" + name + "': the DAG is null");
        return ScheduleLowering.lower(name, LoopState.initial(dag));
    }

    /**
     * Lowers the computation of the compute tensors among {@code args}, with {@code args} as the
     * parameters in that order. Every placeholder the computation reads must be among them.
     */
    public static PrimFunc lower(String name, List<Tensor> args) {
        requireName(name);
        if (args == null) throw new KilnException("function '" + name + "': the argument list is null");
        for (int k = 0; k < args.size(); k++) {
            if (args.get(k) == null)
                throw new KilnException("function '" + name + "': argument " + k + " of " + args.size() + " is null");
        }
        if (new LinkedHashSet<>(args).size() != args.size()) {
            throw new KilnException("function '" + name + "': a tensor is listed twice among the arguments " + args);
        }
        List<Tensor> outs = args.stream().filter(t -> !t.isPlaceholder()).toList();
        if (outs.isEmpty())
            throw new KilnException("function '" + name + "': no compute tensor among the arguments " + args);
        ComputeDAG dag = new ComputeDAG(outs);
        for (Tensor in : dag.inputs()) {
            if (!args.contains(in)) {
                throw new KilnException("function '" + name + "': the computation reads placeholder '" + in.name()
                        + "', which is not among the arguments " + args);
            }
        }
        return ScheduleLowering.lower(name, LoopState.initial(dag), args);
    }

    private static void requireName(String name) {
        if (name == null || name.isEmpty()) {
            throw new KilnException("lower: the function name is " + (name == null ? "null" : "empty"));
        }
    }
}
