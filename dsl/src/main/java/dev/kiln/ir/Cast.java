package dev.kiln.ir;

/**
 * Explicit type conversion. Float to integer truncates toward zero and saturates at the
 * target's range (NaN becomes 0); integer to narrower integer wraps; anything to bool is
 * {@code x != 0}; bool to a number is 0 or 1.
 */
public record Cast(DType dtype, Expr value) implements Expr {
    public Cast {
        if (value == null) throw new KilnException("cast to " + dtype + ": the value is null");
        if (dtype == null)
            throw new KilnException("cast of " + ExprPrinter.print(value) + ": the target dtype is null");
    }

    @Override
    public String toString() {
        return ExprPrinter.print(this);
    }
}
