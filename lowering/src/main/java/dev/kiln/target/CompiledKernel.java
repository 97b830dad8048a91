package dev.kiln.target;

import dev.kiln.runtime.NDArray;
import dev.kiln.tir.PrimFunc;

/**
 * A program compiled by a {@link Backend}, ready to run. {@link #call} checks every argument
 * against the function's parameters (count, dtype, shape, strides, alignment) before anything
 * reaches native code. Closing releases the native code; calls after that fail.
 */
public interface CompiledKernel extends AutoCloseable {

    /** Runs the program on {@code args}: the function's parameters in order (inputs, then outputs). */
    void call(NDArray... args);

    /** The generated code, for reading: LLVM IR and assembly, CUDA C, ... */
    String source();

    /**
     * The byte sizes of the temporaries each call takes from the backend's heap workspace (those too large for the
     * stack), smallest first, each size once; empty where the backend allocates none.
     */
    default java.util.List<Long> heapTemporaries() {
        return java.util.List.of();
    }

    /** The program this kernel was compiled from. */
    PrimFunc func();

    /** The target it was compiled for. */
    Target target();

    @Override
    void close();
}
