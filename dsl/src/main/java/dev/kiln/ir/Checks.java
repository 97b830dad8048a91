package dev.kiln.ir;

/** Shared argument checks with messages that name the expression at fault. */
final class Checks {
    private Checks() {}

    /** Throws unless both operands of a binary node are there, naming the operator and the other operand. */
    static void requireOperands(String op, Expr a, Expr b) {
        if (a == null && b == null) throw new KilnException("'" + op + "': both operands are null");
        if (a == null)
            throw new KilnException("'" + op + "': the left operand is null (right: " + ExprPrinter.print(b) + ")");
        if (b == null)
            throw new KilnException("'" + op + "': the right operand is null (left: " + ExprPrinter.print(a) + ")");
    }

    static void requireBool(String where, Expr e) {
        if (e == null) throw new KilnException(where + ": missing operand");
        if (!e.dtype().isBool()) {
            throw new KilnException(where + " needs a bool operand, but " + ExprPrinter.print(e) + " is " + e.dtype()
                    + "; compare it (e.g. x.ne(0)) or cast it to bool");
        }
    }

    static void requireFloat(String where, Expr e) {
        if (!e.dtype().isFloat()) {
            throw new KilnException(where + " needs a floating operand, but " + ExprPrinter.print(e) + " is "
                    + e.dtype() + "; cast it first");
        }
    }
}
