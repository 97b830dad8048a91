package dev.kiln.ir;

/**
 * What a {@link TensorRead} reads: a named value with a static shape and a dtype. The expression IR
 * needs only these facts; the DSL's {@code dev.kiln.te.Tensor} implements it (TVM's
 * {@code tir::DataProducer}, implemented by {@code te::Tensor}), so {@code ir} does not depend on
 * {@code te}. Implementations compare by identity.
 */
public interface DataProducer {
    /** The name printed in expressions and error messages. */
    String name();

    /** The element type of a read. */
    DType dtype();

    /** The number of axes; a read takes this many indices. */
    int rank();

    /** The extent of axis {@code d}. */
    long dim(int d);
}
