package dev.kiln.bench.suite;

import dev.kiln.ir.DType;
import dev.kiln.lower.LowerDefault;
import dev.kiln.runtime.NDArray;
import dev.kiln.target.Backend;
import dev.kiln.target.CompiledKernel;
import dev.kiln.target.Target;
import dev.kiln.te.ComputeDAG;
import dev.kiln.te.Tensor;
import dev.kiln.te.WideAccumulation;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A workload's seeded inputs and its reference output. Input {@code i} of the DAG (in
 * {@link ComputeDAG#arguments()} order) is {@code NDArray.random(FLOAT32, seed + i, shape)}; the
 * reference is Kiln's default lowering (the loop nest the operator library defines, no schedule;
 * the interpreter's semantics, checked by the jit tests) with its float32 sums accumulated in
 * float64 ({@link WideAccumulation}: the exact total, not one order's drift), compiled with LLVM. References are kept
 * under {@code cacheDir} as raw float32, so the children of one run (Kiln, then each baseline)
 * compute each only once.
 */
record SuiteReference(ComputeDAG dag, NDArray[] args, Map<String, NDArray> inputs, NDArray reference)
        implements AutoCloseable {

    static SuiteReference of(SuiteWorkload w, long seed, Path cacheDir) throws IOException {
        ComputeDAG dag = SuiteDags.of(w);
        List<Tensor> params = dag.arguments();
        NDArray[] args = new NDArray[params.size()];
        Map<String, NDArray> inputs = new LinkedHashMap<>();
        for (int i = 0; i < params.size(); i++) {
            Tensor t = params.get(i);
            args[i] = t.isPlaceholder()
                    ? NDArray.random(DType.FLOAT32, seed + i, t.shape().toArray())
                    : NDArray.allocate(DType.FLOAT32, t.shape().toArray());
            if (t.isPlaceholder()) inputs.put(t.name(), args[i]);
        }
        long[] outDims = params.getLast().shape().toArray();
        NDArray ref = NDArray.allocate(DType.FLOAT32, outDims);
        Path file = cacheDir.resolve(w.key() + "-seed" + seed + "-f64sum.f32");
        long bytes = ref.numElements() * 4L;
        if (Files.isRegularFile(file) && Files.size(file) == bytes) {
            MemorySegment.copy(MemorySegment.ofArray(Files.readAllBytes(file)), 0, ref.segment(), 0, bytes);
        } else {
            NDArray[] refArgs = args.clone();
            refArgs[refArgs.length - 1] = ref;
            Target cpu = Target.cpu();
            try (CompiledKernel k = Backend.forTarget(cpu)
                    .compile(LowerDefault.lower("reference_" + w.op(), WideAccumulation.of(dag)), cpu)) {
                k.call(refArgs);
            }
            Files.createDirectories(cacheDir);
            Files.write(file, ref.segment().toArray(ValueLayout.JAVA_BYTE));
        }
        return new SuiteReference(dag, args, inputs, ref);
    }

    /** The output array Kiln writes (the last argument). */
    NDArray output() {
        return args[args.length - 1];
    }

    long[] outDims() {
        return reference.shape();
    }

    @Override
    public void close() {
        for (NDArray a : args) a.close();
        reference.close();
    }
}
