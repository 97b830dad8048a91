package dev.kiln.tir;

import dev.kiln.ir.Expr;
import dev.kiln.ir.KilnException;
import dev.kiln.ir.Var;

/** {@code let var = value in body}. */
public record Let(Var var, Expr value, Stmt body) implements Stmt {
    public Let {
        if (var.dtype() != value.dtype()) {
            throw new KilnException("let " + var.name() + ": variable is " + var.dtype() + " but value " + value
                    + " is " + value.dtype());
        }
        java.util.Objects.requireNonNull(body, "body");
    }

    @Override
    public String toString() {
        return StmtPrinter.print(this);
    }
}
