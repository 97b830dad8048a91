package dev.kiln.samples;

import dev.kiln.runtime.NDArray;
import dev.kiln.te.Tensor;
import java.util.List;

/**
 * A real workload for the main job: the DSL computation, and a plain-Java reference that
 * computes the same numbers independently of Kiln.
 *
 * @param name      what the table prints
 * @param inputs    the placeholders, in the order the reference takes them
 * @param output    the tensor to compute
 * @param reference plain-Java loops: input arrays in, expected output values out
 */
record Workload(String name, List<Tensor> inputs, Tensor output, Reference reference) {

    /** Plain-Java loops over the flattened inputs. */
    @FunctionalInterface
    interface Reference {
        float[] compute(List<float[]> inputs);
    }

    /** The reference's result as an NDArray shaped like the output. */
    NDArray expected(List<NDArray> inputArrays) {
        List<float[]> data = inputArrays.stream().map(NDArray::toFloatArray).toList();
        return NDArray.fromFloats(reference.compute(data), output.shape().toArray());
    }
}
