package dev.kiln.arith;

import dev.kiln.ir.Binary;
import dev.kiln.ir.BinaryOp;
import dev.kiln.ir.DType;
import dev.kiln.ir.Expr;
import dev.kiln.ir.IntImm;

/** Small matching and building helpers shared by the rule classes. */
final class Patterns {
    private Patterns() {}

    /** The node as a {@code Binary} with operator {@code op}, or null. */
    static Binary op(Expr e, BinaryOp op) {
        return e instanceof Binary b && b.op() == op ? b : null;
    }

    /** Whether {@code e} is an integer (not bool) constant. */
    static boolean isIntConst(Expr e) {
        return e instanceof IntImm c && c.dtype().isInt();
    }

    /** Whether {@code e} is the integer constant {@code v}. */
    static boolean isIntConst(Expr e, long v) {
        return e instanceof IntImm c && c.dtype().isInt() && c.value() == v;
    }

    /** The value of an integer constant (call only after {@link #isIntConst(Expr)}). */
    static long value(Expr e) {
        return ((IntImm) e).value();
    }

    static Expr lit(DType t, long v) {
        return ConstFold.intConst(t, v);
    }

    static Expr bin(BinaryOp op, Expr a, Expr b) {
        return new Binary(op, a, b);
    }

    /**
     * {@code x + k} in canonical form, wrapping {@code k} to the type: {@code x} for 0,
     * {@code x + k} for a small positive offset, {@code x - |k|} for a negative one (for uint8,
     * offsets above 127 are written as subtractions). Equal in value to {@code x + k} with wrapping.
     */
    static Expr offset(Expr x, long k) {
        DType t = x.dtype();
        long w = Scalars.wrap(t, k);
        if (w == 0) return x;
        if (t.isUnsigned()) {
            long mod = t.maxInt() + 1;
            return w > t.maxInt() / 2 ? bin(BinaryOp.SUB, x, lit(t, mod - w)) : bin(BinaryOp.ADD, x, lit(t, w));
        }
        if (w > 0 || w == t.minInt()) return bin(BinaryOp.ADD, x, lit(t, w));
        return bin(BinaryOp.SUB, x, lit(t, -w));
    }

    /** {@code base * k} (k wrapped to the type), written without the multiplication when k is 1. */
    static Expr scaled(Expr base, long k) {
        long w = Scalars.wrap(base.dtype(), k);
        return w == 1 ? base : bin(BinaryOp.MUL, base, lit(base.dtype(), w));
    }

    /**
     * Structural equality ({@code Var} by identity) that short-cuts on shared sub-trees, which
     * the simplifier keeps shared, and never hashes.
     */
    static boolean same(Expr a, Expr b) {
        if (a == b) return true;
        if (a instanceof Binary x && b instanceof Binary y) {
            return x.op() == y.op() && same(x.a(), y.a()) && same(x.b(), y.b());
        }
        return a.equals(b);
    }
}
