package dev.kiln.tir;

import dev.kiln.ir.Expr;
import dev.kiln.ir.KilnException;
import java.util.Objects;

/** {@code if (cond) then else otherwise}; {@code otherwise} is null when there is no else branch. */
public record IfThenElse(Expr cond, Stmt then, Stmt otherwise) implements Stmt {
    public IfThenElse {
        Objects.requireNonNull(then, "then");
        if (!cond.dtype().isBool())
            throw new KilnException("if condition " + cond + " is " + cond.dtype() + ", not bool");
    }

    public static IfThenElse of(Expr cond, Stmt then) {
        return new IfThenElse(cond, then, null);
    }

    @Override
    public String toString() {
        return StmtPrinter.print(this);
    }
}
