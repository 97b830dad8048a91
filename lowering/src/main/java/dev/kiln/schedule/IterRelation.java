package dev.kiln.schedule;

import java.util.List;

/**
 * How the loops of a stage derive from its original axes. Every loop value is an integer
 * function of the leaf loops, which is how lowering rebuilds the original indices.
 */
public sealed interface IterRelation {

    /** {@code parent = outer * factor + inner}; factor is null while undecided. */
    record Split(int parent, int outer, int inner, Long factor) implements IterRelation {}

    /** {@code fused} enumerates {@code parents} (outermost first) in row-major order. */
    record Fuse(List<Integer> parents, int fused) implements IterRelation {
        public Fuse {
            parents = List.copyOf(parents);
        }
    }
}
