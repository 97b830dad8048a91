package dev.kiln.ir;

/** {@code a cmp b} on two operands of one type; the result is bool. */
public record Compare(CompareOp op, Expr a, Expr b) implements Expr {
    public Compare {
        if (op == null) throw new KilnException("comparison: the operator is null");
        Checks.requireOperands(op.symbol(), a, b);
        if (a.dtype() != b.dtype()) {
            throw new KilnException("dtype mismatch in " + op.symbol() + ": " + ExprPrinter.print(a) + " is "
                    + a.dtype() + " but " + ExprPrinter.print(b) + " is " + b.dtype() + "; add a cast()");
        }
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
