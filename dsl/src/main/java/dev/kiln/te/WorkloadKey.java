package dev.kiln.te;

/**
 * The structural workload key of a DAG: {@code "kiln-"} and a SHA-256 over its {@linkplain CanonicalText.Mode#EXACT
 * exact canonical text}, in which names do not matter but shapes, dtypes, constants and expressions do.
 */
final class WorkloadKey {
    private WorkloadKey() {}

    static String of(ComputeDAG dag) {
        return CanonicalText.digest("kiln-", CanonicalText.of(dag, CanonicalText.Mode.EXACT));
    }
}
