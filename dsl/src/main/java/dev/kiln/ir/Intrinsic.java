package dev.kiln.ir;

/**
 * Math intrinsics. All take floating operands of one type and return that type, except
 * {@link #ABS}, which takes any numeric type.
 */
public enum Intrinsic {
    EXP(1),
    LOG(1),
    SQRT(1),
    /** 1 / sqrt(x). */
    RSQRT(1),
    TANH(1),
    /** 1 / (1 + exp(-x)). */
    SIGMOID(1),
    ERF(1),
    /** x to the power y. */
    POW(2),
    ABS(1),
    FLOOR(1),
    CEIL(1),
    /** Round half to even, as IEEE roundeven / LLVM llvm.roundeven. */
    ROUND(1),
    /** a * b + c with one rounding. */
    FMA(3),
    /**
     * a / b correctly rounded, as a plain divide, but never relaxed by a fast-math target (a divide that may multiply
     * by the divisor's reciprocal, LLVM's {@code arcp}, is a bit or two off): the divide that quantisation specifies,
     * where one bit decides a rounded integer (ONNX's {@code round(x / scale)}).
     */
    EXACT_DIV(2);

    private final int arity;

    Intrinsic(int arity) {
        this.arity = arity;
    }

    public int arity() {
        return arity;
    }

    public String displayName() {
        return name().toLowerCase(java.util.Locale.ROOT);
    }
}
