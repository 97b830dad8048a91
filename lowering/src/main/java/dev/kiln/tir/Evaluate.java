package dev.kiln.tir;

import dev.kiln.ir.Expr;
import java.util.Objects;

/** Evaluates an expression for its effect (a call), discarding the value. */
public record Evaluate(Expr value) implements Stmt {
    public Evaluate {
        Objects.requireNonNull(value, "value");
    }

    @Override
    public String toString() {
        return StmtPrinter.print(this);
    }
}
