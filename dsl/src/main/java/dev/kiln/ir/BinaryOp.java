package dev.kiln.ir;

/** Binary arithmetic operators. */
public enum BinaryOp {
    ADD("+"),
    SUB("-"),
    MUL("*"),
    /** True division, floating types only. */
    DIV("/"),
    /** Integer division toward negative infinity. */
    FLOORDIV("floordiv"),
    /** Remainder of FLOORDIV (sign of the divisor). */
    FLOORMOD("floormod"),
    /** Integer division toward zero. */
    TRUNCDIV("truncdiv"),
    /** Remainder of TRUNCDIV (sign of the dividend). */
    TRUNCMOD("truncmod"),
    MIN("min"),
    MAX("max");

    private final String symbol;

    BinaryOp(String symbol) {
        this.symbol = symbol;
    }

    public String symbol() {
        return symbol;
    }

    /** Infix operators print as {@code a + b}; the others as {@code op(a, b)}. */
    public boolean infix() {
        return symbol.length() == 1;
    }

    /** Operators defined on integers only. */
    public boolean integerOnly() {
        return this == FLOORDIV || this == FLOORMOD || this == TRUNCDIV || this == TRUNCMOD;
    }
}
