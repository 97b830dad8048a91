package dev.kiln.schedule;

import java.util.Objects;

/**
 * A loop of a stage in the light loop state: a name, an extent (null while a tile size is still
 * undecided), a kind and an annotation. {@code uid} identifies the loop within its stage across
 * steps: relations and compute_at targets refer to it, so reordering does not break them.
 */
public record Iter(int uid, String name, Long extent, IterKind kind, IterAnnotation annotation) {
    public Iter {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(annotation, "annotation");
    }

    public Iter withAnnotation(IterAnnotation a) {
        return new Iter(uid, name, extent, kind, a);
    }

    public boolean hasExtent() {
        return extent != null;
    }

    @Override
    public String toString() {
        return (annotation == IterAnnotation.NONE ? "" : annotation.displayName() + " ") + name + " ("
                + (extent == null ? "?" : extent) + ")";
    }
}
