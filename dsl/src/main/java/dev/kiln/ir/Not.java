package dev.kiln.ir;

/** Logical negation of a bool expression. */
public record Not(Expr a) implements Expr {
    public Not {
        Checks.requireBool("not", a);
    }

    @Override
    public DType dtype() {
        return DType.BOOL;
    }

    @Override
    public String toString() {
        return ExprPrinter.print(this);
    }
}
