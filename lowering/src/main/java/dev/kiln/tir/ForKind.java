package dev.kiln.tir;

/** How a loop runs. */
public enum ForKind {
    SERIAL,
    PARALLEL,
    VECTORIZED,
    UNROLLED,
    /** Bound to a GPU thread axis; see {@link For#thread()}. */
    THREAD_BOUND;

    public String displayName() {
        return name().toLowerCase(java.util.Locale.ROOT);
    }
}
