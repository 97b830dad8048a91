package dev.kiln.tir;

import dev.kiln.ir.Expr;
import dev.kiln.ir.KilnException;
import dev.kiln.ir.Var;
import java.util.Objects;

/**
 * {@code for var in [min, min + extent): body}. {@code thread} is set exactly when the kind is
 * {@link ForKind#THREAD_BOUND}, and is null otherwise.
 */
public record For(Var var, Expr min, Expr extent, ForKind kind, ThreadAxis thread, Stmt body) implements Stmt {
    public For {
        Objects.requireNonNull(var, "var");
        Objects.requireNonNull(min, "min");
        Objects.requireNonNull(extent, "extent");
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(body, "body");
        if (!var.dtype().isInt() || min.dtype() != var.dtype() || extent.dtype() != var.dtype()) {
            throw new KilnException("loop '" + var.name() + "' needs integer var, min and extent of one type, got "
                    + var.dtype() + ", " + min.dtype() + ", " + extent.dtype());
        }
        if ((kind == ForKind.THREAD_BOUND) != (thread != null)) {
            throw new KilnException("loop '" + var.name() + "': a thread axis is given exactly for THREAD_BOUND loops");
        }
    }

    /** A serial loop. */
    public static For serial(Var var, Expr min, Expr extent, Stmt body) {
        return new For(var, min, extent, ForKind.SERIAL, null, body);
    }

    public For withBody(Stmt newBody) {
        return newBody == body ? this : new For(var, min, extent, kind, thread, newBody);
    }

    @Override
    public String toString() {
        return StmtPrinter.print(this);
    }
}
