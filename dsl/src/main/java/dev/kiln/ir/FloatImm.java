package dev.kiln.ir;

/** A floating-point constant, stored as a double and rounded to its type when used. */
public record FloatImm(DType dtype, double value) implements Expr {
    public FloatImm {
        if (!dtype.isFloat()) {
            throw new KilnException("FloatImm needs a floating type, got " + dtype);
        }
    }

    public static FloatImm f32(double v) {
        return new FloatImm(DType.FLOAT32, v);
    }

    @Override
    public String toString() {
        return ExprPrinter.print(this);
    }
}
