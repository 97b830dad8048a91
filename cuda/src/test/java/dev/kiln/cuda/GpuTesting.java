package dev.kiln.cuda;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.kiln.cuda.codegen.CudaModule;
import dev.kiln.cuda.compile.Nvcc;
import dev.kiln.interp.Interpreter;
import dev.kiln.lower.GpuLimits;
import dev.kiln.lower.GpuPasses;
import dev.kiln.lower.LowerDefault;
import dev.kiln.lower.Lowering;
import dev.kiln.runtime.Comparison;
import dev.kiln.runtime.NDArray;
import dev.kiln.schedule.Schedule;
import dev.kiln.te.ComputeDAG;
import dev.kiln.te.Tensor;
import dev.kiln.tir.PrimFunc;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Shared steps of the CUDA tests: lowering for the H200's limits, nvcc batches, reference runs. */
final class GpuTesting {
    private GpuTesting() {}

    /** The architecture nvcc compiles the tests' kernels for. */
    static final String ARCH = "sm_90";

    static PrimFunc lower(String name, Schedule s) {
        return GpuPasses.lower(name, s, GpuLimits.h200(), Lowering.Options.defaults());
    }

    /** Skips the calling test, with the reason, when there is no nvcc. */
    static void assumeNvcc() {
        assumeTrue(Nvcc.find().isPresent(), "nvcc not found on PATH (nor under $CUDA_HOME/bin or /usr/local/cuda/bin)");
    }

    /**
     * Compiles the modules with nvcc to PTX, one nvcc run per set of compile flags, and returns the
     * PTX of each run. Kernel names must differ across the modules.
     */
    static List<String> compileWithNvcc(List<CudaModule> modules) {
        Map<List<String>, List<CudaModule>> byFlags = new LinkedHashMap<>();
        for (CudaModule m : modules)
            byFlags.computeIfAbsent(m.options().compileFlags(), k -> new ArrayList<>())
                    .add(m);
        List<String> out = new ArrayList<>();
        for (var e : byFlags.entrySet()) out.add(Nvcc.ptx(Nvcc.batch(e.getValue()), ARCH, e.getKey()));
        return out;
    }

    /** Seeded random inputs for the DAG's placeholders. */
    static List<NDArray> inputs(ComputeDAG dag, long seed) {
        List<NDArray> in = new ArrayList<>();
        List<Tensor> ts = dag.inputs();
        for (int i = 0; i < ts.size(); i++)
            in.add(NDArray.random(
                    ts.get(i).dtype(), seed * 31 + i, ts.get(i).shape().toArray()));
        return in;
    }

    /** Runs {@code f} (parameters: the DAG's inputs, then its outputs) in the interpreter; returns the outputs. */
    static List<NDArray> run(PrimFunc f, ComputeDAG dag, List<NDArray> inputs) {
        List<NDArray> args = new ArrayList<>(inputs);
        List<NDArray> outs = new ArrayList<>();
        for (Tensor t : dag.outputs())
            outs.add(NDArray.allocate(t.dtype(), t.shape().toArray()));
        args.addAll(outs);
        Interpreter.run(f, args.toArray(NDArray[]::new));
        return outs;
    }

    /**
     * Null when {@code gpu} computes, in the interpreter, what the default lowering of {@code dag}
     * computes on the same seeded inputs (within rtol = atol = {@code tol}); else a report.
     */
    static String compareWithDefault(ComputeDAG dag, PrimFunc gpu, long seed, double tol) {
        List<NDArray> in = inputs(dag, seed);
        List<NDArray> expected = run(LowerDefault.lower("reference", dag), dag, in);
        List<NDArray> actual = run(gpu, dag, in);
        for (int o = 0; o < expected.size(); o++) {
            Comparison c = actual.get(o).compareTo(expected.get(o), tol, tol);
            if (!c.ok()) return "output " + o + ": " + c.report();
        }
        return null;
    }
}
