package dev.kiln.ir;

/**
 * The scalar data types of Kiln.
 *
 * <h2>Promotion rules</h2>
 * Kiln never converts between two data types on its own. Both operands of an arithmetic or
 * comparison operator must have the same {@code DType}; otherwise building the expression throws a
 * {@link KilnException} naming both operands. The one convenience is for Java literals: in
 * {@code x.add(1)} or {@code x.mul(0.5)} the literal takes the type of the other operand. An
 * integer literal is accepted for any numeric type, a fractional literal only for floating types
 * (and an integral-valued one such as {@code 2.0} for integer types), and a literal that does not
 * fit the type (300 for int8) is an error. To mix types, write {@link Expr#cast(DType)}.
 *
 * <p>Results: arithmetic keeps the operand type, comparisons and logical operators give
 * {@link #BOOL}, {@code select} needs a bool condition and two branches of one type. float16 and
 * bfloat16 values are rounded to their type after every operation (the interpreter computes in
 * float64 and rounds), so results match hardware that computes natively in that type.
 */
public enum DType {
    FLOAT16("float16", Kind.FLOAT, 16),
    BFLOAT16("bfloat16", Kind.FLOAT, 16),
    FLOAT32("float32", Kind.FLOAT, 32),
    FLOAT64("float64", Kind.FLOAT, 64),
    INT8("int8", Kind.INT, 8),
    INT16("int16", Kind.INT, 16),
    INT32("int32", Kind.INT, 32),
    INT64("int64", Kind.INT, 64),
    UINT8("uint8", Kind.UINT, 8),
    BOOL("bool", Kind.BOOL, 1);

    /** The family a type belongs to. */
    public enum Kind {
        FLOAT,
        INT,
        UINT,
        BOOL
    }

    private final String displayName;
    private final Kind kind;
    private final int bits;

    DType(String displayName, Kind kind, int bits) {
        this.displayName = displayName;
        this.kind = kind;
        this.bits = bits;
    }

    public Kind kind() {
        return kind;
    }

    /** Width in bits; bool counts 1 bit but is stored in one byte. */
    public int bits() {
        return bits;
    }

    /** Bytes per element in memory (bool takes one byte). */
    public int bytes() {
        return Math.max(1, bits / 8);
    }

    public boolean isFloat() {
        return kind == Kind.FLOAT;
    }

    /** Signed or unsigned integer (not bool). */
    public boolean isInt() {
        return kind == Kind.INT || kind == Kind.UINT;
    }

    public boolean isUnsigned() {
        return kind == Kind.UINT;
    }

    public boolean isBool() {
        return kind == Kind.BOOL;
    }

    /** Integers and floats; bool is not numeric. */
    public boolean isNumeric() {
        return kind != Kind.BOOL;
    }

    /** Smallest value of an integer type. */
    public long minInt() {
        return switch (kind) {
            case INT -> bits == 64 ? Long.MIN_VALUE : -(1L << (bits - 1));
            case UINT, BOOL -> 0;
            case FLOAT -> throw new KilnException(displayName + " is not an integer type");
        };
    }

    /** Largest value of an integer type. */
    public long maxInt() {
        return switch (kind) {
            case INT -> bits == 64 ? Long.MAX_VALUE : (1L << (bits - 1)) - 1;
            case UINT -> (1L << bits) - 1;
            case BOOL -> 1;
            case FLOAT -> throw new KilnException(displayName + " is not an integer type");
        };
    }

    /** The name used in printouts, logs and workload keys ("float32"). */
    public String displayName() {
        return displayName;
    }

    /** Parses a display name such as {@code "float32"}. */
    public static DType parse(String name) {
        for (DType t : values()) {
            if (t.displayName.equals(name)) return t;
        }
        throw new KilnException("unknown dtype '" + name + "'");
    }

    @Override
    public String toString() {
        return displayName;
    }
}
