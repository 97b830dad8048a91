package dev.kiln.ir;

import java.util.List;

/** {@code buffer[i, j, ...]} in the loop IR: one index per buffer dimension. */
public record BufferLoad(Buffer buffer, List<Expr> indices) implements Expr {
    public BufferLoad {
        indices = List.copyOf(indices);
        if (indices.size() != buffer.rank()) {
            throw new KilnException("buffer '" + buffer.name() + "' has rank " + buffer.rank() + " but is loaded with "
                    + indices.size() + " index(es)");
        }
        for (Expr e : indices) {
            if (!e.dtype().isInt()) {
                throw new KilnException("index " + ExprPrinter.print(e) + " of buffer '" + buffer.name() + "' has type "
                        + e.dtype() + "; indices must be integers");
            }
        }
    }

    @Override
    public DType dtype() {
        return buffer.dtype();
    }

    @Override
    public String toString() {
        return ExprPrinter.print(this);
    }
}
