package dev.kiln.operators;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kiln.runtime.NDArray;
import dev.kiln.te.ComputeDAG;
import dev.kiln.te.Operation;
import dev.kiln.te.Tensor;
import java.util.List;
import java.util.function.Function;

/**
 * Shared steps of the convolution, pooling and padding tests: run an operator on seeded random
 * inputs through {@link OpHarness} and compare it with a plain-Java reference.
 */
final class ConvTesting {
    private ConvTesting() {}

    /** Tolerances for float32 results: the interpreter and the reference sum in different orders. */
    static final double RTOL = 1e-5;

    static final double ATOL = 1e-5;

    /**
     * Runs {@code out} on random inputs (seed {@code seed}), computes {@code reference} from the
     * inputs' row-major float data, and asserts the two agree within {@link #RTOL}/{@link #ATOL}.
     * The reference must not be all zeros (a comparison with zeros proves little).
     */
    static void check(Tensor out, List<Tensor> inputs, long seed, Function<float[][], float[]> reference) {
        List<NDArray> in = OpHarness.randomInputs(inputs, seed);
        try (NDArray got = OpHarness.run(out, inputs, in)) {
            float[][] data = in.stream().map(NDArray::toFloatArray).toArray(float[][]::new);
            float[] ref = reference.apply(data);
            assertThat(ref).as("reference of " + out.name()).hasSize((int)
                    out.shape().numElements());
            boolean nonZero = false;
            for (float v : ref) nonZero |= v != 0;
            assertThat(nonZero)
                    .as("reference of " + out.name() + " has a non-zero value")
                    .isTrue();
            try (NDArray expected = NDArray.fromFloats(ref, out.shape().toArray())) {
                got.assertClose(expected, RTOL, ATOL);
            }
        } finally {
            in.forEach(NDArray::close);
        }
    }

    /** Names of the compute stages of the computation of {@code out}, producers first. */
    static List<String> stages(Tensor out) {
        return ComputeDAG.of(out).ops().stream()
                .filter(o -> !o.output(0).isPlaceholder())
                .map(Operation::name)
                .toList();
    }
}
