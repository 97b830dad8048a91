package dev.kiln.graph;

import dev.kiln.interp.Interpreter;
import dev.kiln.interp.Program;
import dev.kiln.lower.LowerDefault;
import dev.kiln.runtime.NDArray;
import dev.kiln.target.Backend;
import dev.kiln.target.CompiledKernel;
import dev.kiln.target.Target;
import dev.kiln.te.ComputeDAG;
import dev.kiln.tir.PrimFunc;
import java.util.HashMap;
import java.util.Map;

/**
 * How {@link ReferenceExecutor} runs one node: the default lowering of its DAG, in the
 * {@link #interpreter() interpreter} (the definition of correct, slow) or compiled by a
 * {@link #compiled(Target) backend} (the same loops, much faster, for large networks). Programs are
 * cached by workload key, so repeated layers are lowered once.
 */
public interface NodeRunner extends AutoCloseable {

    /** Runs the default lowering of {@code dag} on {@code args} (its arguments in order). */
    void run(ComputeDAG dag, NDArray... args);

    /** A short name for messages. */
    String name();

    @Override
    default void close() {}

    /** The reference interpreter. */
    static NodeRunner interpreter() {
        Map<String, Program> cache = new HashMap<>();
        return new NodeRunner() {
            public void run(ComputeDAG dag, NDArray... args) {
                cache.computeIfAbsent(dag.workloadKey(), k -> Interpreter.compile(LowerDefault.lower("node", dag)))
                        .run(args);
            }

            public String name() {
                return "interpreter";
            }
        };
    }

    /** Default-lowered kernels compiled for {@code target} (closed with the runner). */
    static NodeRunner compiled(Target target) {
        Backend backend = Backend.forTarget(target);
        Map<String, CompiledKernel> cache = new HashMap<>();
        return new NodeRunner() {
            public void run(ComputeDAG dag, NDArray... args) {
                cache.computeIfAbsent(dag.workloadKey(), k -> {
                            PrimFunc f = LowerDefault.lower("ref_" + cache.size(), dag);
                            return backend.compile(f, target);
                        })
                        .call(args);
            }

            public String name() {
                return "default-lowered kernels on " + target;
            }

            public void close() {
                cache.values().forEach(CompiledKernel::close);
                cache.clear();
            }
        };
    }
}
