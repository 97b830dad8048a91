package dev.kiln.ir;

/**
 * A scalar expression: the one IR for tensor bodies (in {@code compute}) and for the loop IR's
 * values and indices. Nodes are immutable records, except {@link Var} which compares by identity.
 * Every node knows its {@link DType}; constructors check types and never convert silently (see
 * {@link DType} for the rules).
 *
 * <p>The default methods give the fluent style of the DSL: {@code A.at(i, k).mul(B.at(k, j))}.
 * Java literals passed to them take the type of this expression.
 */
public sealed interface Expr
        permits IntImm,
                FloatImm,
                Var,
                Binary,
                Compare,
                And,
                Or,
                Not,
                Select,
                Cast,
                Call,
                TensorRead,
                BufferLoad,
                Reduce {

    DType dtype();

    // ---- arithmetic -------------------------------------------------------------------------

    default Expr add(Expr other) {
        return new Binary(BinaryOp.ADD, this, other);
    }

    default Expr add(long c) {
        return add(Literals.like(this, c));
    }

    default Expr add(double c) {
        return add(Literals.like(this, c));
    }

    default Expr sub(Expr other) {
        return new Binary(BinaryOp.SUB, this, other);
    }

    default Expr sub(long c) {
        return sub(Literals.like(this, c));
    }

    default Expr sub(double c) {
        return sub(Literals.like(this, c));
    }

    default Expr mul(Expr other) {
        return new Binary(BinaryOp.MUL, this, other);
    }

    default Expr mul(long c) {
        return mul(Literals.like(this, c));
    }

    default Expr mul(double c) {
        return mul(Literals.like(this, c));
    }

    /** True division; floating types only (use floordiv or truncdiv for integers). */
    default Expr div(Expr other) {
        return new Binary(BinaryOp.DIV, this, other);
    }

    default Expr div(long c) {
        return div(Literals.like(this, c));
    }

    default Expr div(double c) {
        return div(Literals.like(this, c));
    }

    /** Integer division rounding toward negative infinity. */
    default Expr floordiv(Expr other) {
        return new Binary(BinaryOp.FLOORDIV, this, other);
    }

    default Expr floordiv(long c) {
        return floordiv(Literals.like(this, c));
    }

    /** Remainder of {@link #floordiv}; has the sign of the divisor. */
    default Expr floormod(Expr other) {
        return new Binary(BinaryOp.FLOORMOD, this, other);
    }

    default Expr floormod(long c) {
        return floormod(Literals.like(this, c));
    }

    /** Integer division rounding toward zero (C semantics). */
    default Expr truncdiv(Expr other) {
        return new Binary(BinaryOp.TRUNCDIV, this, other);
    }

    default Expr truncdiv(long c) {
        return truncdiv(Literals.like(this, c));
    }

    /** Remainder of {@link #truncdiv}; has the sign of the dividend. */
    default Expr truncmod(Expr other) {
        return new Binary(BinaryOp.TRUNCMOD, this, other);
    }

    default Expr truncmod(long c) {
        return truncmod(Literals.like(this, c));
    }

    default Expr min(Expr other) {
        return new Binary(BinaryOp.MIN, this, other);
    }

    default Expr min(long c) {
        return min(Literals.like(this, c));
    }

    default Expr min(double c) {
        return min(Literals.like(this, c));
    }

    default Expr max(Expr other) {
        return new Binary(BinaryOp.MAX, this, other);
    }

    default Expr max(long c) {
        return max(Literals.like(this, c));
    }

    default Expr max(double c) {
        return max(Literals.like(this, c));
    }

    /** Negation, written as {@code 0 - x}. */
    default Expr neg() {
        return Literals.like(this, 0L).sub(this);
    }

    // ---- comparisons and logic --------------------------------------------------------------

    default Expr eq(Expr other) {
        return new Compare(CompareOp.EQ, this, other);
    }

    default Expr eq(long c) {
        return eq(Literals.like(this, c));
    }

    default Expr eq(double c) {
        return eq(Literals.like(this, c));
    }

    default Expr ne(Expr other) {
        return new Compare(CompareOp.NE, this, other);
    }

    default Expr ne(long c) {
        return ne(Literals.like(this, c));
    }

    default Expr ne(double c) {
        return ne(Literals.like(this, c));
    }

    default Expr lt(Expr other) {
        return new Compare(CompareOp.LT, this, other);
    }

    default Expr lt(long c) {
        return lt(Literals.like(this, c));
    }

    default Expr lt(double c) {
        return lt(Literals.like(this, c));
    }

    default Expr le(Expr other) {
        return new Compare(CompareOp.LE, this, other);
    }

    default Expr le(long c) {
        return le(Literals.like(this, c));
    }

    default Expr le(double c) {
        return le(Literals.like(this, c));
    }

    default Expr gt(Expr other) {
        return new Compare(CompareOp.GT, this, other);
    }

    default Expr gt(long c) {
        return gt(Literals.like(this, c));
    }

    default Expr gt(double c) {
        return gt(Literals.like(this, c));
    }

    default Expr ge(Expr other) {
        return new Compare(CompareOp.GE, this, other);
    }

    default Expr ge(long c) {
        return ge(Literals.like(this, c));
    }

    default Expr ge(double c) {
        return ge(Literals.like(this, c));
    }

    default Expr and(Expr other) {
        return new And(this, other);
    }

    default Expr or(Expr other) {
        return new Or(this, other);
    }

    default Expr not() {
        return new Not(this);
    }

    // ---- conversion -------------------------------------------------------------------------

    /** Explicit conversion; the only way to mix types. */
    default Expr cast(DType to) {
        return to == dtype() ? this : new Cast(to, this);
    }
}
