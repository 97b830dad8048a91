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

    /** The node as an ADD or SUB, or null. */
    static Binary addOrSub(Expr e) {
        return e instanceof Binary b && (b.op() == BinaryOp.ADD || b.op() == BinaryOp.SUB) ? b : null;
    }

    /** +1 for ADD, -1 for SUB. */
    static int sign(Binary addOrSub) {
        return addOrSub.op() == BinaryOp.ADD ? 1 : -1;
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

    /** A term {@code base * coeff} of a sum: {@code x * c} gives (x, c), any other non-constant x gives (x, 1). */
    record Term(Expr base, long coeff) {
        static Term of(Expr e) {
            if (isIntConst(e)) return null;
            Binary m = op(e, BinaryOp.MUL);
            if (m != null && isIntConst(m.b())) return new Term(m.a(), value(m.b()));
            return new Term(e, 1);
        }

        /** {@code base * k}, written without the multiplication when k is 1. */
        static Expr build(Expr base, long k) {
            long w = Scalars.wrap(base.dtype(), k);
            return w == 1 ? base : bin(BinaryOp.MUL, base, lit(base.dtype(), w));
        }
    }
}
