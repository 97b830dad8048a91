package dev.kiln.ir;

/** The half-open interval {@code [min, min + extent)}. */
public record Range(Expr min, Expr extent) {
    public Range {
        if (!min.dtype().isInt() || !extent.dtype().isInt()) {
            throw new KilnException("a range needs integer bounds, got " + min.dtype() + " and " + extent.dtype());
        }
    }

    /** {@code [0, extent)} in int32. */
    public static Range of(long extent) {
        return new Range(IntImm.i32(0), IntImm.i32(extent));
    }

    /** The extent as a constant, or throws if it is not one. */
    public long constExtent() {
        if (extent instanceof IntImm c) return c.value();
        throw new KilnException("extent " + extent + " is not a constant");
    }

    @Override
    public String toString() {
        return "[" + min + ", " + min + " + " + extent + ")";
    }
}
