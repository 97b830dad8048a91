package dev.kiln.schedule;

/** Where a stage is computed; the codes are Ansor's. */
public enum ComputeAtKind {
    /** In its own loop nest at the top level. */
    ROOT,
    /** Substituted into its consumers; no loop nest of its own. */
    INLINED,
    /** Inside a loop of another stage (compute_at). */
    ITER
}
