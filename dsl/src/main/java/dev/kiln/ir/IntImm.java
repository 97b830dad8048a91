package dev.kiln.ir;

/** An integer or bool constant. The value must fit the type. */
public record IntImm(DType dtype, long value) implements Expr {
    public IntImm {
        if (!dtype.isInt() && !dtype.isBool()) {
            throw new KilnException("IntImm needs an integer or bool type, got " + dtype);
        }
        if (dtype != DType.INT64 && (value < dtype.minInt() || value > dtype.maxInt())) {
            throw new KilnException("constant " + value + " does not fit " + dtype + " [" + dtype.minInt() + ", "
                    + dtype.maxInt() + "]");
        }
    }

    public static IntImm i32(long v) {
        return new IntImm(DType.INT32, v);
    }

    public static IntImm i64(long v) {
        return new IntImm(DType.INT64, v);
    }

    public static IntImm bool(boolean v) {
        return new IntImm(DType.BOOL, v ? 1 : 0);
    }

    @Override
    public String toString() {
        return ExprPrinter.print(this);
    }
}
