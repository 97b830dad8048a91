package dev.kiln.interp;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * The mutable state of one run of a {@link Program}: variable slots (integer and bool values in
 * {@code ints}, floating values in {@code floats}), the memory of every buffer slot, and the
 * scratch memory of {@code Allocate} statements. One frame per run, used by one thread.
 */
final class Frame {
    final long[] ints;
    final double[] floats;
    final MemorySegment[] bufs;
    final MemorySegment[] scratch;
    final Arena arena;

    Frame(int ints, int floats, int bufs, int scratch, Arena arena) {
        this.ints = new long[ints];
        this.floats = new double[floats];
        this.bufs = new MemorySegment[bufs];
        this.scratch = new MemorySegment[scratch];
        this.arena = arena;
    }
}
