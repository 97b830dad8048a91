package dev.kiln.ir;

/** Shared argument checks with messages that name the expression at fault. */
final class Checks {
    private Checks() {}

    static void requireBool(String where, Expr e) {
        if (e == null) throw new KilnException(where + ": missing operand");
        if (!e.dtype().isBool()) {
            throw new KilnException(where + " needs a bool operand, but " + ExprPrinter.print(e) + " is "
                    + e.dtype() + "; compare it (e.g. x.ne(0)) or cast it to bool");
        }
    }

    static void requireFloat(String where, Expr e) {
        if (!e.dtype().isFloat()) {
            throw new KilnException(where + " needs a floating operand, but " + ExprPrinter.print(e) + " is "
                    + e.dtype() + "; cast it first");
        }
    }
}
