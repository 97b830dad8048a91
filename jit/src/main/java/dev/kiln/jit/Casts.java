package dev.kiln.jit;

import dev.kiln.ir.DType;
import java.util.List;

/**
 * Conversions between data types, and rounding to float16 and bfloat16, with the semantics of
 * {@link dev.kiln.ir.Cast} and the interpreter: float to integer truncates and saturates (NaN
 * gives 0) through {@code llvm.fptosi.sat} (float32/float64 to 8 or 16 bits: clamped in float, then {@code
 * fptosi}); integers wrap; anything to bool is {@code x != 0}
 * (NaN gives true); integer and float to float round once to nearest even.
 *
 * <p>One rounding is kept where a naive conversion would round twice: int32 and int64 to
 * float16/bfloat16 first round the integer to the type's precision (after which the conversion is
 * exact), and float64 to float16/bfloat16 goes through float32 with round-to-odd, which makes the
 * second rounding correct. bfloat16 rounding is done on the bits (AVX-512 BF16's conversion
 * flushes subnormals, which would differ from the interpreter).
 */
final class Casts {
    private Casts() {}

    /** Precision in bits (with the implicit one) of a 16-bit float type. */
    private static int precision(DType t) {
        return t == DType.FLOAT16 ? 11 : 8;
    }

    static Val cast(CodeGen g, Val v, DType to) {
        DType from = v.dtype();
        if (from == to) return v;
        if (to == DType.BOOL) {
            if (from.isFloat()) return g.op2("fcmp une", v, Val.uniform(IrTypes.floatConst(from, 0), from), DType.BOOL);
            return g.op2("icmp ne", v, Val.uniform("0", from), DType.BOOL);
        }
        if (from == DType.BOOL) {
            if (to.isFloat()) return g.convert("uitofp", v, IrTypes.reg(to), to);
            return g.convert("zext", v, IrTypes.reg(to), to);
        }
        if (from.isInt() && to.isInt()) return intToInt(g, v, to);
        if (from.isInt()) return intToFloat(g, v, to);
        if (to.isInt() && to.bits() < 32 && (from == DType.FLOAT32 || from == DType.FLOAT64)) {
            // NaN to 0, then clamped in float to the narrow type's range (bounds exact in float32 and float64, not in
            // the 16-bit floats, which keep the intrinsic below) and truncated: the values of llvm.fpto[su]i.sat to 8
            // or 16 bits, whose x86 code for a vector is one lane at a time (a quantize of 128 x 3072 floats to
            // uint8: 0.25 -> 0.048 ms at one thread; CastTest checks every value against the interpreter)
            long lo = to.isUnsigned() ? 0 : -(1L << (to.bits() - 1));
            long hi = (1L << (to.isUnsigned() ? to.bits() : to.bits() - 1)) - 1;
            Val c = nanToZeroClamped(g, v, lo, hi);
            return intToInt(g, g.convert("fptosi", c, IrTypes.reg(DType.INT32), DType.INT32), to);
        }
        if (to.isInt()) {
            String name = (to.isUnsigned() ? "llvm.fptoui.sat." : "llvm.fptosi.sat.");
            int n = v.isUniform() ? 1 : g.lanes;
            String ret = IrTypes.vec(IrTypes.reg(to), n);
            String arg = IrTypes.vec(IrTypes.reg(from), n);
            String fn = name + IrTypes.mangle(IrTypes.reg(to), n) + "." + IrTypes.mangle(IrTypes.reg(from), n);
            g.mod.declare(fn, ret, arg);
            String r = g.fn.emit(
                    "call " + ret + " @" + fn + "(" + arg + " " + (v.isUniform() ? v.ref() : g.vector(v)) + ")");
            return v.isUniform() ? Val.uniform(r, to) : Val.varying(r, to);
        }
        return floatToFloat(g, v, to);
    }

    /**
     * Float {@code v} with NaN as 0, then clamped to {@code [lo, hi]}: NaN goes to 0 first, so LLVM knows the
     * clamp's operands are numbers and emits one max and one min.
     */
    static Val nanToZeroClamped(CodeGen g, Val v, double lo, double hi) {
        DType t = v.dtype();
        Val zero = Val.uniform(IrTypes.floatConst(t, 0), t);
        Val c = g.select(g.op2("fcmp uno", v, v, DType.BOOL), zero, v);
        c = g.intrinsic("llvm.maxnum", t, List.of(c, Val.uniform(IrTypes.floatConst(t, lo), t)));
        return g.intrinsic("llvm.minnum", t, List.of(c, Val.uniform(IrTypes.floatConst(t, hi), t)));
    }

    private static Val intToInt(CodeGen g, Val v, DType to) {
        DType from = v.dtype();
        int fb = from.bits(), tb = to.bits();
        if (fb == tb) return retype(v, to);
        if (tb < fb) {
            if (v.form() == Val.Form.LINEAR) { // truncation commutes with + and *
                return Val.linear(
                        g.fn.emit("trunc " + IrTypes.reg(from) + " " + v.ref() + " to " + IrTypes.reg(to)),
                        v.step(),
                        to);
            }
            return g.convert("trunc", v, IrTypes.reg(to), to);
        }
        String op = from.isUnsigned() ? "zext" : "sext";
        if (v.form() == Val.Form.LINEAR && g.inIndex) { // index arithmetic does not wrap (nsw)
            return Val.linear(
                    g.fn.emit(op + " " + IrTypes.reg(from) + " " + v.ref() + " to " + IrTypes.reg(to)), v.step(), to);
        }
        return g.convert(op, v, IrTypes.reg(to), to);
    }

    private static Val retype(Val v, DType to) {
        return new Val(v.form(), v.ref(), v.step(), to);
    }

    private static Val intToFloat(CodeGen g, Val v, DType to) {
        DType from = v.dtype();
        String op = from.isUnsigned() ? "uitofp" : "sitofp";
        if (to == DType.FLOAT32 || to == DType.FLOAT64) return g.convert(op, v, IrTypes.reg(to), to);
        if (from.bits() <= 16) { // exact in float32: one rounding to the 16-bit type
            return roundTo(g, retype(g.convert(op, v, "float", DType.FLOAT32), DType.FLOAT32), to);
        }
        // Round the integer to the type's precision first; the conversion to float32 is then exact.
        Val magnitude = roundIntMagnitude(g, v, precision(to));
        Val f = g.convert("uitofp", magnitude, "float", DType.FLOAT32);
        Val neg = g.op2("icmp slt", v, Val.uniform("0", from), DType.BOOL);
        Val negated = unary(g, "fneg", f);
        return roundTo(g, retype(g.select(neg, negated, f), DType.FLOAT32), to);
    }

    /** |v| (as an unsigned number of v's width) rounded to {@code p} significant bits, ties to even. */
    private static Val roundIntMagnitude(CodeGen g, Val v, int p) {
        DType t = v.dtype();
        int w = t.bits();
        Val a = g.intrinsic("llvm.abs", t, List.of(v), "i1 false");
        Val lz = g.intrinsic("llvm.ctlz", t, List.of(a), "i1 false");
        Val nbits = g.op2("sub", Val.uniform(Integer.toString(w), t), lz, t);
        Val sh = g.op2("sub", nbits, Val.uniform(Integer.toString(p), t), t);
        Val shPos = g.op2("icmp sgt", sh, Val.uniform("0", t), DType.BOOL);
        Val sh1 = g.select(shPos, sh, Val.uniform("1", t)); // keeps the shifts below defined
        Val q = g.op2("lshr", a, sh1, t);
        Val one = Val.uniform("1", t);
        Val bitAt = g.op2("shl", one, sh1, t);
        Val remMask = g.op2("sub", bitAt, one, t);
        Val rem = g.op2("and", a, remMask, t);
        Val half = g.op2("lshr", bitAt, one, t);
        Val above = g.op2("icmp ugt", rem, half, DType.BOOL);
        Val tie = g.op2("icmp eq", rem, half, DType.BOOL);
        Val odd = g.op2("icmp ne", g.op2("and", q, one, t), Val.uniform("0", t), DType.BOOL);
        Val up = g.op2("or", above, g.op2("and", tie, odd, DType.BOOL), DType.BOOL);
        Val q2 = g.op2("add", q, g.convert("zext", up, IrTypes.reg(t), t), t);
        Val rounded = g.op2("shl", q2, sh1, t);
        return g.select(shPos, rounded, a);
    }

    private static Val floatToFloat(CodeGen g, Val v, DType to) {
        DType from = v.dtype();
        boolean fromDouble = from == DType.FLOAT64;
        if (to == DType.FLOAT64) return g.convert("fpext", v, "double", to); // from any float register
        if (fromDouble) {
            if (to == DType.FLOAT32) return g.convert("fptrunc", v, "float", to);
            return roundDoubleTo(g, v, to);
        }
        // float register to float register: float32 <-> 16-bit types
        Val f = retype(v, DType.FLOAT32);
        return to == DType.FLOAT32 ? f : roundTo(g, f, to);
    }

    /**
     * Rounds a float register value to type {@code t} (float16 or bfloat16; float32 is returned
     * as is), keeping it in a float register.
     */
    static Val roundTo(CodeGen g, Val v, DType t) {
        return switch (t) {
            case FLOAT16 -> {
                Val h = g.convertRaw("fptrunc", v, "float", "half", DType.FLOAT16);
                yield g.convertRaw("fpext", h, "half", "float", DType.FLOAT16);
            }
            case BFLOAT16 -> roundToBf16(g, v);
            case FLOAT32, FLOAT64 -> new Val(v.form(), v.ref(), 0, t);
            case INT8, INT16, INT32, INT64, UINT8, BOOL ->
                throw new IllegalArgumentException(t + " is not a float type");
        };
    }

    private static Val roundToBf16(CodeGen g, Val v) {
        Val bits = g.convert("bitcast", v, "i32", DType.INT32);
        Val nan = g.op2("fcmp uno", v, v, DType.BOOL);
        Val lsb = g.op2(
                "and",
                g.op2("lshr", bits, Val.uniform("16", DType.INT32), DType.INT32),
                Val.uniform("1", DType.INT32),
                DType.INT32);
        Val biased = g.op2("add", g.op2("add", bits, Val.uniform("32767", DType.INT32), DType.INT32), lsb, DType.INT32);
        Val quiet = g.op2("or", bits, Val.uniform("4194304", DType.INT32), DType.INT32); // 0x00400000
        Val chosen = g.select(nan, quiet, biased);
        Val cleared = g.op2("and", chosen, Val.uniform("-65536", DType.INT32), DType.INT32); // 0xFFFF0000
        return g.convert("bitcast", cleared, "float", DType.BFLOAT16);
    }

    /**
     * Rounds a double to float16 or bfloat16 with one rounding: to float32 with round-to-odd (the
     * nearest float toward zero, its last bit set when inexact), then to the type.
     */
    static Val roundDoubleTo(CodeGen g, Val d, DType t) {
        if (t == DType.FLOAT64) return d;
        if (t == DType.FLOAT32) return g.convert("fptrunc", d, "float", t);
        Val f = g.convert("fptrunc", d, "float", DType.FLOAT32);
        Val back = g.convert("fpext", f, "double", DType.FLOAT64);
        Val inexact = g.op2("fcmp one", back, d, DType.BOOL);
        Val absBack = g.intrinsic("llvm.fabs", DType.FLOAT64, List.of(back));
        Val absD = g.intrinsic("llvm.fabs", DType.FLOAT64, List.of(d));
        Val over = g.op2("fcmp ogt", absBack, absD, DType.BOOL);
        Val bits = g.convert("bitcast", f, "i32", DType.INT32);
        Val down = g.op2("sub", bits, Val.uniform("1", DType.INT32), DType.INT32);
        Val toward0 = g.select(over, down, bits);
        Val odd = g.op2("or", toward0, Val.uniform("1", DType.INT32), DType.INT32);
        Val chosen = g.select(inexact, odd, bits);
        Val r = g.convert("bitcast", chosen, "float", DType.FLOAT32);
        return roundTo(g, r, t);
    }

    /** A unary instruction such as {@code fneg}. */
    static Val unary(CodeGen g, String opcode, Val v) {
        if (v.isUniform())
            return Val.uniform(g.fn.emit(opcode + " " + IrTypes.reg(v.dtype()) + " " + v.ref()), v.dtype());
        String vv = g.vector(v);
        return Val.varying(g.fn.emit(opcode + " " + g.vty(v.dtype()) + " " + vv), v.dtype());
    }
}
