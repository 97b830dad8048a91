package dev.kiln.tir;

import dev.kiln.ir.Binary;
import dev.kiln.ir.BinaryOp;
import dev.kiln.ir.Buffer;
import dev.kiln.ir.BufferLoad;
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

    /**
     * {@code e} when this store is an accumulation {@code B[I] = B[I] + e} (the value adds {@code e} to a load of the
     * same buffer view, by identity, at equal indices), else null. The interpreter's reduction nests and the LLVM
     * backend's reassociable sums both match this form.
     */
    public Expr increment() {
        return value instanceof Binary bin
                        && bin.op() == BinaryOp.ADD
                        && bin.a() instanceof BufferLoad l
                        && l.buffer() == buffer
                        && l.indices().equals(indices)
                ? bin.b()
                : null;
    }

    @Override
    public String toString() {
        return StmtPrinter.print(this);
    }
}
