package dev.kiln.ir;

import java.util.List;

/**
 * {@code T[i, j, ...]}: reading a DSL tensor inside a {@code compute} body. The tensor is a
 * {@link DataProducer} (in Kiln always a {@code dev.kiln.te.Tensor}; {@code Tensor.of(read)} gives it
 * back typed).
 */
public record TensorRead(DataProducer tensor, List<Expr> indices) implements Expr {
    public TensorRead {
        indices = List.copyOf(indices);
        if (indices.size() != tensor.rank()) {
            throw new KilnException("tensor '" + tensor.name() + "' has rank " + tensor.rank() + " (shape "
                    + shapeOf(tensor) + ") but is indexed with " + indices.size() + " index(es): " + tensor.name()
                    + indices.stream().map(ExprPrinter::print).toList());
        }
        for (int d = 0; d < indices.size(); d++) {
            Expr e = indices.get(d);
            if (!e.dtype().isInt()) {
                throw new KilnException("index " + d + " of tensor '" + tensor.name() + "' is " + ExprPrinter.print(e)
                        + " of type " + e.dtype() + "; indices must be integers");
            }
        }
    }

    @Override
    public DType dtype() {
        return tensor.dtype();
    }

    private static String shapeOf(DataProducer t) {
        StringBuilder sb = new StringBuilder("[");
        for (int d = 0; d < t.rank(); d++) sb.append(d > 0 ? ", " : "").append(t.dim(d));
        return sb.append(']').toString();
    }

    @Override
    public String toString() {
        return ExprPrinter.print(this);
    }
}
