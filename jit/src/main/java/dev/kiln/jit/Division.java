package dev.kiln.jit;

import dev.kiln.ir.Binary;
import dev.kiln.ir.BinaryOp;
import dev.kiln.ir.DType;
import dev.kiln.ir.ExprPrinter;

/**
 * Integer floordiv, floormod, truncdiv and truncmod. Division by a constant other than 0 and -1
 * is a plain {@code sdiv}/{@code srem} (plus the floor adjustment), which LLVM strength-reduces.
 * Otherwise the divisor is guarded: a zero divisor in an active lane sets the kernel's status to
 * this division's site number (the Java side then throws naming the expression) and is replaced
 * by 1, and -1 is handled apart, because {@code MIN / -1} traps on x86 while the interpreter wraps.
 * uint8 operands use {@code udiv}/{@code urem}, for which floor and trunc agree.
 */
final class Division {
    private Division() {}

    static Val emit(CodeGen g, Binary e, Val a, Val b) {
        DType t = a.dtype();
        BinaryOp op = e.op();
        boolean uns = t.isUnsigned();
        boolean constant = b.isLiteral();
        long c = constant ? Long.parseLong(b.ref()) : 0;
        if (uns) c &= 0xFF;
        Val zero = Val.uniform("0", t);
        if (constant && c != 0 && (uns || c != -1)) return divide(g, op, a, b, uns);
        if (constant && c == -1) { // x / -1 = -x (wrapping), x % -1 = 0
            return op == BinaryOp.FLOORDIV || op == BinaryOp.TRUNCDIV ? g.op2("sub", zero, a, t) : zero;
        }
        // general divisor: report zero, avoid the traps
        Val isZero = g.op2("icmp eq", b, zero, DType.BOOL);
        reportZero(g, e, isZero);
        Val one = Val.uniform("1", t);
        if (uns) return divide(g, op, a, g.select(isZero, one, b), true);
        Val isMinus1 = g.op2("icmp eq", b, Val.uniform("-1", t), DType.BOOL);
        Val unsafe = g.op2("or", isZero, isMinus1, DType.BOOL);
        Val safe = g.select(unsafe, one, b);
        Val q = divide(g, op, a, safe, false);
        Val special = op == BinaryOp.FLOORDIV || op == BinaryOp.TRUNCDIV ? g.op2("sub", zero, a, t) : zero;
        return g.select(isMinus1, special, q);
    }

    /** The division proper, for a divisor that is neither 0 nor (signed) -1. */
    private static Val divide(CodeGen g, BinaryOp op, Val a, Val b, boolean uns) {
        DType t = a.dtype();
        if (uns) {
            return g.op2(op == BinaryOp.FLOORDIV || op == BinaryOp.TRUNCDIV ? "udiv" : "urem", a, b, t);
        }
        return switch (op) {
            case TRUNCDIV -> g.op2("sdiv", a, b, t);
            case TRUNCMOD -> g.op2("srem", a, b, t);
            case FLOORDIV -> {
                Val q = g.op2("sdiv", a, b, t);
                Val adjust = needsAdjust(g, g.op2("srem", a, b, t), b);
                yield g.op2("sub", q, g.convert("zext", adjust, IrTypes.reg(t), t), t);
            }
            case FLOORMOD -> {
                Val r = g.op2("srem", a, b, t);
                Val adjust = needsAdjust(g, r, b);
                yield g.op2("add", r, g.select(adjust, b, Val.uniform("0", t)), t);
            }
            default -> throw new IllegalStateException(op + " is not a division");
        };
    }

    /** {@code r != 0 && sign(r) != sign(b)}: the truncated quotient is one above the floor. */
    private static Val needsAdjust(CodeGen g, Val r, Val b) {
        DType t = r.dtype();
        Val zero = Val.uniform("0", t);
        Val nonZero = g.op2("icmp ne", r, zero, DType.BOOL);
        Val signsDiffer = g.op2("icmp slt", g.op2("xor", r, b, t), zero, DType.BOOL);
        return g.op2("and", nonZero, signsDiffer, DType.BOOL);
    }

    /** If any active lane divides by zero, sets the status to this site's code. */
    private static void reportZero(CodeGen g, Binary e, Val isZero) {
        g.divisionSites.add(ExprPrinter.print(e));
        int code = g.divisionSites.size();
        Val active = g.andMask(g.mask, isZero);
        String any = g.anyLane(active);
        String bad = g.fn.label("divzero");
        String ok = g.fn.label("divok");
        g.fn.condBr(any, bad, ok);
        g.fn.block(bad);
        g.setStatus(code);
        g.fn.br(ok);
        g.fn.block(ok);
    }
}
