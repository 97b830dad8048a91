package dev.kiln.ir;

/** {@code a op b}; both operands have the same numeric type, which is the result type. */
public record Binary(BinaryOp op, Expr a, Expr b) implements Expr {
    public Binary {
        if (op == null) throw new KilnException("binary expression: the operator is null");
        Checks.requireOperands(op.symbol(), a, b);
        if (a.dtype() != b.dtype()) {
            throw new KilnException("dtype mismatch in " + op.symbol() + ": " + ExprPrinter.print(a) + " is "
                    + a.dtype() + " but " + ExprPrinter.print(b) + " is " + b.dtype() + "; add a cast()");
        }
        if (!a.dtype().isNumeric()) {
            throw new KilnException("arithmetic " + op.symbol() + " on bool operands " + ExprPrinter.print(a) + " and "
                    + ExprPrinter.print(b) + "; use and/or/not or cast()");
        }
        if (op == BinaryOp.DIV && !a.dtype().isFloat()) {
            throw new KilnException("div on integer operands " + ExprPrinter.print(a) + " / " + ExprPrinter.print(b)
                    + " (" + a.dtype() + "): use floordiv or truncdiv to say how to round");
        }
        if (op.integerOnly() && !a.dtype().isInt()) {
            throw new KilnException(op.symbol() + " needs integer operands, got " + a.dtype() + " in "
                    + ExprPrinter.print(a) + ", " + ExprPrinter.print(b) + "; use div for floating types");
        }
    }

    @Override
    public DType dtype() {
        return a.dtype();
    }

    @Override
    public String toString() {
        return ExprPrinter.print(this);
    }
}
