package dev.kiln.jit;

import dev.kiln.ir.Binary;
import dev.kiln.ir.BinaryOp;
import dev.kiln.ir.Call;
import dev.kiln.ir.CompareOp;
import dev.kiln.ir.DType;
import dev.kiln.ir.ExprPrinter;
import java.util.List;

/**
 * Arithmetic, comparisons and math intrinsics on {@link Val}s, with the interpreter's semantics:
 * integers wrap (index arithmetic, which never wraps in a valid program, is marked {@code nsw});
 * floor division rounds toward negative infinity; a zero divisor reports through the kernel's
 * status word and never traps; float16 and bfloat16 results are rounded after every operation;
 * min and max on floats propagate NaN and order -0 below +0 ({@code llvm.minimum}; on a fast-math target
 * either zero may come back when both are zeros).
 *
 * <p>Transcendental functions on float32 use LLVM's intrinsics (libm's {@code expf}, ...), which
 * can differ from the interpreter (double precision, then rounded) in the last bit; rsqrt and
 * sigmoid are computed in double like the interpreter, and fma in one rounding like it.
 */
final class Arith {
    private Arith() {}

    static Val binary(CodeGen g, Binary e, Val a, Val b) {
        DType t = a.dtype();
        if (t.isFloat()) return floatBinary(g, e.op(), a, b);
        String nsw = g.inIndex ? " nsw" : "";
        return switch (e.op()) {
            case ADD -> linearOr(g, a, b, +1, "add" + nsw);
            case SUB -> linearOr(g, a, b, -1, "sub" + nsw);
            case MUL -> mul(g, a, b, "mul" + nsw);
            case MIN -> g.intrinsic(t.isUnsigned() ? "llvm.umin" : "llvm.smin", t, List.of(a, b));
            case MAX -> g.intrinsic(t.isUnsigned() ? "llvm.umax" : "llvm.smax", t, List.of(a, b));
            case FLOORDIV, FLOORMOD, TRUNCDIV, TRUNCMOD -> Division.emit(g, e, a, b);
            case DIV -> throw new IllegalStateException("integer div is rejected by Binary");
        };
    }

    /**
     * {@code acc + e} of a float accumulation ({@link StmtGen#floatAccumulation}: a fast-math target's float32 or
     * float64 {@code B[I] = B[I] + e}). Scalar adds carry LLVM's {@code reassoc} flag, so a sum over a loop may be
     * vectorized into partial sums (the last bits of the result may differ from the interpreter's in-order sum, as
     * FMA contraction's may); vector adds (a vectorized loop's lanes are already partial sums) keep the plain
     * flags, so no rewrite of a register tile's FMA chain is invited.
     */
    static Val accumulate(CodeGen g, Val acc, Val e) {
        DType t = acc.dtype();
        if (!acc.isUniform() || !e.isUniform() || e.dtype() != t) return floatBinary(g, BinaryOp.ADD, acc, e);
        return g.op2("fadd reassoc contract", acc, e, t);
    }

    private static Val floatBinary(CodeGen g, BinaryOp op, Val a, Val b) {
        DType t = a.dtype();
        if (t == DType.FLOAT16) {
            switch (op) {
                case ADD, SUB, MUL, DIV -> {
                    if (g.target.hasNativeFloat16()) return halfBinary(g, op, a, b);
                    g.mod.noteOnce(EMULATED_HALF);
                }
                default -> {}
            }
        }
        // contraction only where no rounding to a 16-bit type sits between the multiply and the add
        String c = g.options.fpContract() && (t == DType.FLOAT32 || t == DType.FLOAT64) ? " contract" : "";
        return switch (op) {
            case ADD -> Casts.roundTo(g, g.op2("fadd" + c, a, b, t), t);
            case SUB -> Casts.roundTo(g, g.op2("fsub" + c, a, b, t), t);
            case MUL -> Casts.roundTo(g, g.op2("fmul" + c, a, b, t), t);
            // a fast-math target's divide may multiply by the reciprocal (arcp): LLVM then divides once outside a
            // loop whose divisor it does not change (softmax's row sum, a norm's deviation) and multiplies by the
            // reciprocal of a constant (an average pool's window) instead of a vdivps per vector
            case DIV -> Casts.roundTo(g, g.op2(c.isEmpty() ? "fdiv" : "fdiv arcp" + c, a, b, t), t);
            // a fast-math target's min and max still propagate NaN but may return either zero of -0 and +0 (nsz):
            // LLVM then drops the sign test of llvm.maximum's x86 expansion, three instructions of six per vector
            // (a softmax's row maximum, every ReLU)
            case MIN -> g.flaggedIntrinsic(c.isEmpty() ? "" : "nsz", "llvm.minimum", t, List.of(a, b));
            case MAX -> g.flaggedIntrinsic(c.isEmpty() ? "" : "nsz", "llvm.maximum", t, List.of(a, b));
            case FLOORDIV, FLOORMOD, TRUNCDIV, TRUNCMOD ->
                throw new IllegalStateException(op + " on floats is rejected by Binary");
        };
    }

    /** The kernel's note when its float16 arithmetic runs in float32 registers. */
    static final String EMULATED_HALF = "float16 arithmetic is computed in float32 registers and rounded to half after"
            + " each operation: the target has no avx512fp16 (with it, one half-precision instruction of 32 lanes)";

    /**
     * A float16 add, subtract, multiply or divide as one half-precision instruction ({@code vaddph}, {@code vmulph},
     * ...; 32 lanes a zmm). Kiln's float16 values live in float registers, each rounded to half; the operands are
     * narrowed back to half (exact), computed in half and widened, and LLVM folds the narrow-widen pairs away, so a
     * chain of float16 operations stays in half registers. The same result as computing in float and rounding:
     * float's 24-bit significand is at least twice half's 11 bits plus two, so rounding twice equals rounding once
     * for these operations. With FMA contraction on (a fast-math target) a multiply feeding an add may fuse into
     * one {@code vfmadd231ph}, rounding once where the interpreter rounds twice, as float32 contraction does.
     */
    private static Val halfBinary(CodeGen g, BinaryOp op, Val a, Val b) {
        String opcode =
                switch (op) {
                    case ADD -> "fadd";
                    case SUB -> "fsub";
                    case MUL -> "fmul";
                    case DIV -> "fdiv";
                    default -> throw new IllegalStateException(op + " is not a half-precision instruction");
                };
        String c = g.options.fpContract() && op != BinaryOp.DIV ? " contract" : "";
        if (a.isUniform() && b.isUniform()) {
            String r = g.fn.emit(opcode + c + " half " + narrow(g, a) + ", " + narrow(g, b));
            return Val.uniform(g.fn.emit("fpext half " + r + " to float"), DType.FLOAT16);
        }
        String vh = IrTypes.vec("half", g.lanes);
        String r = g.fn.emit(opcode + c + " " + vh + " " + halfVector(g, a) + ", " + halfVector(g, b));
        return Val.varying(g.fn.emit("fpext " + vh + " " + r + " to " + IrTypes.vec("float", g.lanes)), DType.FLOAT16);
    }

    /** A uniform float16 value (a float holding a rounded half) as a {@code half}: exact. */
    private static String narrow(CodeGen g, Val v) {
        return g.fn.emit("fptrunc float " + v.ref() + " to half");
    }

    /** {@code v} as a {@code <lanes x half>} operand; a uniform value narrowed once, then broadcast. */
    private static String halfVector(CodeGen g, Val v) {
        if (v.form() == Val.Form.UNIFORM) {
            // broadcast as i16 bits: a splat of a narrowed float is otherwise rewritten by LLVM into a narrowing of a
            // float splat (a vcvtps2phx of a whole vector per broadcast)
            String bits = g.splat(g.fn.emit("bitcast half " + narrow(g, v) + " to i16"), "i16");
            return g.fn.emit(
                    "bitcast " + IrTypes.vec("i16", g.lanes) + " " + bits + " to " + IrTypes.vec("half", g.lanes));
        }
        String vf = IrTypes.vec("float", g.lanes);
        return g.fn.emit("fptrunc " + vf + " " + g.vector(v) + " to " + IrTypes.vec("half", g.lanes));
    }

    /** a + b or a - b, keeping lane-linear values symbolic. */
    private static Val linearOr(CodeGen g, Val a, Val b, int sign, String opcode) {
        boolean linear = a.form() != Val.Form.VARYING
                && b.form() != Val.Form.VARYING
                && (a.form() == Val.Form.LINEAR || b.form() == Val.Form.LINEAR);
        if (!linear) return g.op2(opcode, a, b, a.dtype());
        String base = g.fn.emit(opcode + " " + IrTypes.reg(a.dtype()) + " " + a.ref() + ", " + b.ref());
        return Val.linear(base, a.step() + sign * b.step(), a.dtype());
    }

    private static Val mul(CodeGen g, Val a, Val b, String opcode) {
        if (a.form() == Val.Form.LINEAR && b.isLiteral()) return scaleLinear(g, a, b, opcode);
        if (b.form() == Val.Form.LINEAR && a.isLiteral()) return scaleLinear(g, b, a, opcode);
        return g.op2(opcode, a, b, a.dtype());
    }

    private static Val scaleLinear(CodeGen g, Val lin, Val c, String opcode) {
        long k = Long.parseLong(c.ref());
        String base = g.fn.emit(opcode + " " + IrTypes.reg(lin.dtype()) + " " + lin.ref() + ", " + c.ref());
        return Val.linear(base, lin.step() * k, lin.dtype());
    }

    static Val compare(CodeGen g, CompareOp op, Val a, Val b) {
        DType t = a.dtype();
        String pred;
        if (t.isFloat()) {
            pred = switch (op) {
                case EQ -> "fcmp oeq";
                case NE -> "fcmp une";
                case LT -> "fcmp olt";
                case LE -> "fcmp ole";
                case GT -> "fcmp ogt";
                case GE -> "fcmp oge";
            };
        } else {
            boolean u = t.isUnsigned() || t.isBool();
            pred = switch (op) {
                case EQ -> "icmp eq";
                case NE -> "icmp ne";
                case LT -> u ? "icmp ult" : "icmp slt";
                case LE -> u ? "icmp ule" : "icmp sle";
                case GT -> u ? "icmp ugt" : "icmp sgt";
                case GE -> u ? "icmp uge" : "icmp sge";
            };
        }
        return g.op2(pred, a, b, DType.BOOL);
    }

    static Val call(CodeGen g, Call c, List<Val> args) {
        DType t = c.dtype();
        Val x = args.get(0);
        return switch (c.fn()) {
            case EXP -> FastMath.applies(t) ? Casts.roundTo(g, FastMath.exp(g, x), t) : unaryFloat(g, "llvm.exp", x);
            case LOG -> unaryFloat(g, "llvm.log", x);
            case SQRT -> unaryFloat(g, "llvm.sqrt", x);
            case TANH -> FastMath.applies(t) ? Casts.roundTo(g, FastMath.tanh(g, x), t) : unaryFloat(g, "llvm.tanh", x);
            case POW -> Casts.roundTo(g, g.intrinsic("llvm.pow", t, args), t);
            // a plain fdiv, without the fast-math target's arcp (Arith.binary): correctly rounded
            case EXACT_DIV -> Casts.roundTo(g, g.op2("fdiv", x, args.get(1), t), t);
            case FLOOR -> g.intrinsic("llvm.floor", t, args);
            case CEIL -> g.intrinsic("llvm.ceil", t, args);
            case ROUND -> g.intrinsic("llvm.roundeven", t, args);
            case ABS -> {
                if (t.isFloat()) yield g.intrinsic("llvm.fabs", t, args);
                if (t.isUnsigned()) yield x;
                yield g.intrinsic("llvm.abs", t, args, "i1 false");
            }
            case ERF -> {
                if (FastMath.applies(t)) yield Casts.roundTo(g, FastMath.erf(g, x), t);
                String f = t == DType.FLOAT64 ? "erf" : "erff";
                String ty = IrTypes.reg(t);
                g.mod.declare(f, ty, ty, "nounwind");
                Val r = g.perLane(t, args, s -> g.fn.emit("call " + ty + " @" + f + "(" + ty + " " + s.get(0) + ")"));
                yield Casts.roundTo(g, r, t);
            }
            case RSQRT -> {
                Val d = toDouble(g, x);
                Val s = g.intrinsic("llvm.sqrt", DType.FLOAT64, List.of(d));
                Val r = g.op2("fdiv", Val.uniform(IrTypes.doubleHex(1.0), DType.FLOAT64), s, DType.FLOAT64);
                yield Casts.roundDoubleTo(g, r, t);
            }
            case SIGMOID -> {
                if (FastMath.applies(t)) yield Casts.roundTo(g, FastMath.sigmoid(g, x), t);
                Val d = toDouble(g, x);
                Val neg = Casts.unary(g, "fneg", d);
                Val e = g.intrinsic("llvm.exp", DType.FLOAT64, List.of(neg));
                Val one = Val.uniform(IrTypes.doubleHex(1.0), DType.FLOAT64);
                Val r = g.op2("fdiv", one, g.op2("fadd", one, e, DType.FLOAT64), DType.FLOAT64);
                yield Casts.roundDoubleTo(g, r, t);
            }
            case FMA -> {
                if (t == DType.FLOAT32 || t == DType.FLOAT64) yield g.intrinsic("llvm.fma", t, args);
                Val r = g.intrinsic(
                        "llvm.fma",
                        DType.FLOAT64,
                        args.stream().map(a -> toDouble(g, a)).toList());
                yield Casts.roundDoubleTo(g, r, t);
            }
        };
    }

    private static Val unaryFloat(CodeGen g, String intrinsic, Val x) {
        DType t = x.dtype();
        return Casts.roundTo(g, g.intrinsic(intrinsic, t, List.of(x)), t);
    }

    private static Val toDouble(CodeGen g, Val x) {
        return x.dtype() == DType.FLOAT64 ? x : g.convert("fpext", x, "double", DType.FLOAT64);
    }

    /** The text of an expression for messages. */
    static String show(Binary e) {
        return ExprPrinter.print(e);
    }
}
