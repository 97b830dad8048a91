package dev.kiln.bench.suite;

import dev.kiln.runtime.NDArray;
import java.util.Map;

/**
 * A library the suite times Kiln against (PyTorch, oneDNN, OpenBLAS). {@link #prepare} sets up
 * one workload on the suite's inputs (layouts converted, primitives created, weights reordered:
 * what a user does once) and returns what is timed; a library without the operator throws
 * {@link Unsupported} saying so, which becomes an UNSUPPORTED row, never a missing one.
 */
interface Baseline extends AutoCloseable {

    /** The implementation's name in the table: "pytorch", "onednn", "openblas". */
    String name();

    /** One line on the library (version, ISA, threads), printed once per child. */
    String describe();

    /**
     * Sets up {@code w} on {@code inputs} (Kiln's arrays by placeholder name, channels-last
     * layouts); {@code outDims} is the shape of Kiln's output, which {@link Prepared#output} returns.
     */
    Prepared prepare(SuiteWorkload w, Map<String, NDArray> inputs, long[] outDims);

    @Override
    default void close() {}

    /** A workload ready to run. */
    interface Prepared extends AutoCloseable {
        /** One call, as timed. */
        void run();

        /** The output of the last call, in the layout of Kiln's output (a fresh array the caller closes). */
        NDArray output();

        /** Which kernel or implementation ran (oneDNN's impl_info_str, OpenBLAS's core, PyTorch's path). */
        String kernel();

        @Override
        void close();
    }

    /** The library has no such operator (the message says which and why). */
    final class Unsupported extends RuntimeException {
        Unsupported(String message) {
            super(message);
        }
    }
}
