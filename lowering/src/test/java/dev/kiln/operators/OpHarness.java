package dev.kiln.operators;

import dev.kiln.interp.Interpreter;
import dev.kiln.lower.LowerDefault;
import dev.kiln.runtime.NDArray;
import dev.kiln.te.Tensor;
import dev.kiln.tir.PrimFunc;
import java.util.ArrayList;
import java.util.List;

/**
 * Runs an operator of the library through the default lowering and the reference interpreter,
 * so each operator test only builds the op, a plain-Java reference, and compares.
 */
final class OpHarness {
    private OpHarness() {}

    /** Fresh seeded random arrays for the given placeholders (floats uniform in [-1, 1)). */
    static List<NDArray> randomInputs(List<Tensor> inputs, long seed) {
        List<NDArray> out = new ArrayList<>();
        for (int i = 0; i < inputs.size(); i++) {
            Tensor t = inputs.get(i);
            out.add(NDArray.random(t.dtype(), seed * 31 + i, t.shape().toArray()));
        }
        return out;
    }

    /** Lowers {@code output} with parameters (inputs..., output), runs it and returns the output array. */
    static NDArray run(Tensor output, List<Tensor> inputs, List<NDArray> inputArrays) {
        List<Tensor> args = new ArrayList<>(inputs);
        args.add(output);
        PrimFunc f = LowerDefault.lower(output.name(), args);
        NDArray out = NDArray.allocate(output.dtype(), output.shape().toArray());
        List<NDArray> all = new ArrayList<>(inputArrays);
        all.add(out);
        Interpreter.run(f, all.toArray(NDArray[]::new));
        return out;
    }
}
