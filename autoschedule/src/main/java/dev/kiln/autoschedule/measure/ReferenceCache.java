package dev.kiln.autoschedule.measure;

import dev.kiln.autoschedule.SearchTask;
import dev.kiln.interp.Interpreter;
import dev.kiln.ir.KilnException;
import dev.kiln.runtime.NDArray;
import dev.kiln.tir.PrimFunc;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The {@link Workload} of each task, made once: the arguments of the task's default lowering and,
 * when correctness is checked, the outputs the reference {@link Interpreter} computes from the
 * seeded inputs. Keyed by the DAG's structural workload key and the seed, so every schedule of a
 * workload, in every batch, is checked against one reference.
 */
final class ReferenceCache implements AutoCloseable {
    private final Map<String, Workload> workloads = new HashMap<>();
    private int computations;

    /** The workload of {@code task}; computes it (running the interpreter if {@code withReference}) the first time. */
    synchronized Workload get(SearchTask task, long seed, boolean withReference) {
        String key = task.dag().workloadKey() + "|seed=" + seed + "|reference=" + withReference;
        Workload w = workloads.get(key);
        if (w == null) {
            w = compute(task, seed, withReference);
            workloads.put(key, w);
        }
        return w;
    }

    /** How many times a reference was computed (for tests: once per workload). */
    synchronized int computations() {
        return computations;
    }

    private Workload compute(SearchTask task, long seed, boolean withReference) {
        PrimFunc reference = Measurers.referenceProgram(task);
        int nInputs = task.dag().inputs().size();
        List<ArgumentSpec> args = new ArrayList<>();
        for (int i = 0; i < reference.params().size(); i++)
            args.add(ArgumentSpec.of(reference.params().get(i), i < nInputs));
        if (!withReference) return new Workload(args, seed, List.of());
        computations++;
        Workload noRefs = new Workload(args, seed, List.of());
        NDArray[] arrays = noRefs.allocate(reference.params());
        List<NDArray> refs = new ArrayList<>();
        try {
            Interpreter.run(reference, arrays);
            for (int i = nInputs; i < arrays.length; i++) refs.add(arrays[i].copy());
        } catch (RuntimeException e) {
            refs.forEach(NDArray::close);
            throw new KilnException("task " + task.workloadKey() + ": the interpreter cannot compute the reference "
                    + "output on the seeded inputs (seed " + seed + "): " + e.getMessage());
        } finally {
            for (NDArray a : arrays) a.close();
            noRefs.close();
        }
        return new Workload(args, seed, refs);
    }

    @Override
    public synchronized void close() {
        workloads.values().forEach(Workload::close);
        workloads.clear();
    }
}
