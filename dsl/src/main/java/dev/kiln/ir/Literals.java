package dev.kiln.ir;

/** Turns Java literals into constants of a given type, following the rules in {@link DType}. */
public final class Literals {
    private Literals() {}

    /** An integer literal in the type of {@code like}. */
    public static Expr like(Expr like, long value) {
        return of(like.dtype(), value);
    }

    /** A floating literal in the type of {@code like}. */
    public static Expr like(Expr like, double value) {
        return of(like.dtype(), value);
    }

    /** An integer literal as a constant of type {@code t}. */
    public static Expr of(DType t, long value) {
        if (t.isFloat()) return new FloatImm(t, value);
        if (t.isBool()) {
            if (value != 0 && value != 1) {
                throw new KilnException("literal " + value + " is not a bool (0 or 1)");
            }
            return new IntImm(t, value);
        }
        return new IntImm(t, value);
    }

    /** A floating literal as a constant of type {@code t}; integral values are accepted for integer types. */
    public static Expr of(DType t, double value) {
        if (t.isFloat()) return new FloatImm(t, value);
        if (value != Math.rint(value) || Double.isInfinite(value)) {
            throw new KilnException("literal " + value + " cannot be used with an expression of type " + t
                    + " without a cast: Kiln never converts silently");
        }
        return of(t, (long) value);
    }
}
