package dev.kiln.ir;

import dev.kiln.te.Tensor;
import java.util.List;

/** {@code T[i, j, ...]}: reading a DSL tensor inside a {@code compute} body. */
public record TensorRead(Tensor tensor, List<Expr> indices) implements Expr {
    public TensorRead {
        indices = List.copyOf(indices);
        if (indices.size() != tensor.rank()) {
            throw new KilnException("tensor '" + tensor.name() + "' has rank " + tensor.rank() + " (shape "
                    + tensor.shape() + ") but is indexed with " + indices.size() + " index(es): " + tensor.name()
                    + indices.stream().map(ExprPrinter::print).toList());
        }
        for (int d = 0; d < indices.size(); d++) {
            Expr e = indices.get(d);
            if (!e.dtype().isInt()) {
                throw new KilnException("index " + d + " of tensor '" + tensor.name() + "' is "
                        + ExprPrinter.print(e) + " of type " + e.dtype() + "; indices must be integers");
            }
        }
    }

    @Override
    public DType dtype() { return tensor.dtype(); }

    @Override
    public String toString() { return ExprPrinter.print(this); }
}
