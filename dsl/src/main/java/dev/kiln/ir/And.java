package dev.kiln.ir;

/** Logical and of two bool expressions. */
public record And(Expr a, Expr b) implements Expr {
    public And {
        Checks.requireBool("and", a);
        Checks.requireBool("and", b);
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
