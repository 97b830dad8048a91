/**
 * Kiln's tensor DSL: the expression IR ({@code dev.kiln.ir}), tensors, operations, the front door
 * {@code Te} and {@code ComputeDAG} ({@code dev.kiln.te}), and the operator library
 * ({@code dev.kiln.nn}). All three packages are API.
 */
module dev.kiln.dsl {
    exports dev.kiln.ir;
    exports dev.kiln.te;
    exports dev.kiln.nn;
}
