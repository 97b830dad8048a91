package dev.kiln.ir;

import java.util.Objects;

/** {@code a cmp b} on two operands of one type; the result is bool. */
public record Compare(CompareOp op, Expr a, Expr b) implements Expr {
    public Compare {
        Objects.requireNonNull(op, "op");
        if (a.dtype() != b.dtype()) {
            throw new KilnException("dtype mismatch in " + op.symbol() + ": " + ExprPrinter.print(a) + " is "
                    + a.dtype() + " but " + ExprPrinter.print(b) + " is " + b.dtype() + "; add a cast()");
        }
    }

    @Override
    public DType dtype() { return DType.BOOL; }

    @Override
    public String toString() { return ExprPrinter.print(this); }
}
