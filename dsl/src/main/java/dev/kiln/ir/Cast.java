package dev.kiln.ir;

import java.util.Objects;

/**
 * Explicit type conversion. Float to integer truncates toward zero and saturates at the
 * target's range (NaN becomes 0); integer to narrower integer wraps; anything to bool is
 * {@code x != 0}; bool to a number is 0 or 1.
 */
public record Cast(DType dtype, Expr value) implements Expr {
    public Cast {
        Objects.requireNonNull(dtype, "dtype");
        Objects.requireNonNull(value, "value");
    }

    @Override
    public String toString() { return ExprPrinter.print(this); }
}
