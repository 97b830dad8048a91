package dev.kiln.ir;

/** Logical or of two bool expressions. */
public record Or(Expr a, Expr b) implements Expr {
    public Or {
        Checks.requireBool("or", a);
        Checks.requireBool("or", b);
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
