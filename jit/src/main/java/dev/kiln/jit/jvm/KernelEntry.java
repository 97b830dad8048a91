package dev.kiln.jit.jvm;

import java.lang.foreign.MemorySegment;

/**
 * What a generated kernel class implements: one call runs the function on the segments of its
 * arguments (one per parameter, in order, already checked by {@link JvmKernel}).
 */
interface KernelEntry {
    void run(MemorySegment[] args);
}
