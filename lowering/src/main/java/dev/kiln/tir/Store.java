package dev.kiln.tir;

import dev.kiln.ir.Buffer;
import dev.kiln.ir.Expr;
import dev.kiln.ir.ExprPrinter;
import dev.kiln.ir.KilnException;
import java.util.List;

/** {@code buffer[indices] = value}. */
public record Store(Buffer buffer, List<Expr> indices, Expr value) implements Stmt {
    public Store {
        indices = List.copyOf(indices);
        if (indices.size() != buffer.rank()) {
            throw new KilnException("store to buffer '" + buffer.name() + "' of rank " + buffer.rank() + " with "
                    + indices.size() + " index(es)");
        }
        for (Expr e : indices) {
            if (!e.dtype().isInt()) {
                throw new KilnException("index " + ExprPrinter.print(e) + " of buffer '" + buffer.name() + "' is "
                        + e.dtype() + "; indices must be integers");
            }
        }
        if (value.dtype() != buffer.dtype()) {
            throw new KilnException("storing " + ExprPrinter.print(value) + " of type " + value.dtype()
                    + " into buffer '" + buffer.name() + "' of type " + buffer.dtype() + "; add a cast()");
        }
    }

    @Override
    public String toString() {
        return StmtPrinter.print(this);
    }
}
