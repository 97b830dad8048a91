package dev.kiln.jit.jvm;

import static org.objectweb.asm.Opcodes.*;

import dev.kiln.ir.And;
import dev.kiln.ir.Binary;
import dev.kiln.ir.BinaryOp;
import dev.kiln.ir.Buffer;
import dev.kiln.ir.BufferLoad;
import dev.kiln.ir.Call;
import dev.kiln.ir.Cast;
import dev.kiln.ir.Compare;
import dev.kiln.ir.CompareOp;
import dev.kiln.ir.DType;
import dev.kiln.ir.Expr;
import dev.kiln.ir.ExprPrinter;
import dev.kiln.ir.FloatImm;
import dev.kiln.ir.IntImm;
import dev.kiln.ir.Intrinsic;
import dev.kiln.ir.KilnException;
import dev.kiln.ir.Not;
import dev.kiln.ir.Or;
import dev.kiln.ir.Reduce;
import dev.kiln.ir.Select;
import dev.kiln.ir.TensorRead;
import dev.kiln.ir.Var;
import dev.kiln.runtime.Numerics;
import java.util.List;
import org.objectweb.asm.Label;
import org.objectweb.asm.MethodVisitor;

/**
 * Scalar expressions to bytecode. {@link #emit} leaves the value of an expression on the operand
 * stack in its {@link JType}; the operator emitters ({@link #binaryOp}, {@link #compareOp},
 * {@link #cast}, {@link #intrinsic}) work on operands already on the stack, so the vector code
 * generator reuses them lane by lane. Every operator follows the interpreter's semantics exactly.
 */
final class ScalarGen {
    private ScalarGen() {}

    static final String SEGMENT = "java/lang/foreign/MemorySegment";
    static final String NUMERICS = "dev/kiln/runtime/Numerics";
    static final String OPS = "dev/kiln/jit/jvm/JvmOps";

    /** The value layout a buffer element is read and written with. */
    record Layout(String cls, String field, String desc) {
        String type() {
            return "Ljava/lang/foreign/ValueLayout$" + cls + ";";
        }

        void push(MethodVisitor mv) {
            mv.visitFieldInsn(GETSTATIC, "java/lang/foreign/ValueLayout", field, type());
        }
    }

    static Layout layout(DType t) {
        return switch (t) {
            case FLOAT32 -> new Layout("OfFloat", "JAVA_FLOAT_UNALIGNED", "F");
            case FLOAT64 -> new Layout("OfDouble", "JAVA_DOUBLE_UNALIGNED", "D");
            case FLOAT16, BFLOAT16, INT16 -> new Layout("OfShort", "JAVA_SHORT_UNALIGNED", "S");
            case INT32 -> new Layout("OfInt", "JAVA_INT_UNALIGNED", "I");
            case INT64 -> new Layout("OfLong", "JAVA_LONG_UNALIGNED", "J");
            case INT8, UINT8, BOOL -> new Layout("OfByte", "JAVA_BYTE", "B");
        };
    }

    static void emit(MethodGen g, Expr e) {
        MethodVisitor mv = g.mv;
        switch (e) {
            case IntImm c -> g.intConst(JType.of(c.dtype()), c.value());
            case FloatImm c -> floatConst(g, c.dtype(), c.value());
            case Var v -> g.load(g.var(v));
            case Binary b -> {
                emit(g, b.a());
                emit(g, b.b());
                binaryOp(g, b.op(), b.dtype(), b);
            }
            case Compare c -> {
                emit(g, c.a());
                emit(g, c.b());
                compareOp(g, c.op(), c.a().dtype());
            }
            case And a -> {
                Label no = new Label(), end = new Label();
                emit(g, a.a());
                mv.visitJumpInsn(IFEQ, no);
                emit(g, a.b());
                mv.visitJumpInsn(GOTO, end);
                mv.visitLabel(no);
                mv.visitInsn(ICONST_0);
                mv.visitLabel(end);
            }
            case Or o -> {
                Label yes = new Label(), end = new Label();
                emit(g, o.a());
                mv.visitJumpInsn(IFNE, yes);
                emit(g, o.b());
                mv.visitJumpInsn(GOTO, end);
                mv.visitLabel(yes);
                mv.visitInsn(ICONST_1);
                mv.visitLabel(end);
            }
            case Not n -> {
                emit(g, n.a());
                mv.visitInsn(ICONST_1);
                mv.visitInsn(IXOR);
            }
            case Select s -> {
                InvariantGuards.Guard h = g.guards.get(s);
                if (h != null) {
                    h.emit(g);
                    return;
                }
                Label no = new Label(), end = new Label();
                emit(g, s.cond());
                mv.visitJumpInsn(IFEQ, no);
                emit(g, s.t());
                mv.visitJumpInsn(GOTO, end);
                mv.visitLabel(no);
                emit(g, s.f());
                mv.visitLabel(end);
            }
            case Cast c -> {
                emit(g, c.value());
                cast(g, c.value().dtype(), c.dtype());
            }
            case Call c -> {
                boolean f32 = c.dtype() == DType.FLOAT32 && c.fn() != Intrinsic.FMA && c.fn() != Intrinsic.ABS;
                for (Expr a : c.args()) {
                    emit(g, a);
                    if (f32) mv.visitInsn(F2D); // float32 intrinsics are computed in double, then rounded
                }
                intrinsic(g, c.fn(), c.dtype(), f32);
            }
            case BufferLoad l -> load(g, l.buffer(), l.indices());
            case TensorRead r -> throw notLowered(g, e);
            case Reduce r -> throw notLowered(g, e);
        }
    }

    private static KilnException notLowered(MethodGen g, Expr e) {
        return new KilnException("function '" + g.cls.func.name() + "' still contains " + ExprPrinter.print(e)
                + "; the JVM backend compiles lowered loop IR only (lower the computation first)");
    }

    static void floatConst(MethodGen g, DType t, double v) {
        double r = Numerics.roundFloat(t, v);
        if (t == DType.FLOAT32) g.fconst((float) r);
        else g.dconst(r);
    }

    // ---- memory ------------------------------------------------------------------------------------

    /** Pushes the byte offset (long) of element {@code idx} of {@code b} inside its segment. */
    static void address(MethodGen g, Buffer b, List<Expr> idx, long byteBase) {
        MethodVisitor mv = g.mv;
        long[] strides = constStrides(g, b);
        long esize = b.dtype().bytes();
        long constant = byteBase;
        boolean any = false;
        for (int d = 0; d < idx.size(); d++) {
            long scale = strides[d] * esize;
            Expr e = idx.get(d);
            if (e instanceof IntImm c) {
                constant += c.value() * scale;
                continue;
            }
            if (scale == 0) continue;
            if (longIndices()) {
                emitLong(g, e);
            } else {
                emit(g, e);
                if (JType.of(e.dtype()) == JType.INT) mv.visitInsn(I2L);
            }
            if (scale != 1) {
                g.lconst(scale);
                mv.visitInsn(LMUL);
            }
            if (any) mv.visitInsn(LADD);
            any = true;
        }
        if (!any) {
            g.lconst(constant);
        } else if (constant != 0) {
            g.lconst(constant);
            mv.visitInsn(LADD);
        }
    }

    /**
     * Whether int32 index arithmetic is done in long ({@link #emitLong}); off when the system property
     * {@code kiln.jvm.longIndex} is {@code false} (read at each compile, for A/B measurements).
     */
    static boolean longIndices() {
        return !"false".equals(System.getProperty("kiln.jvm.longIndex"));
    }

    /**
     * Pushes int32 index {@code e} as a long, its sums, differences and products of variables and
     * constants computed in long (as the LLVM backend computes addresses: an index that overflows int32
     * is undefined there), so that an address is {@code (long) i * scale + invariant} in the loop
     * variable {@code i}, the form C2's range-check elimination recognises; anything else is computed
     * in its own type and widened.
     */
    static void emitLong(MethodGen g, Expr e) {
        MethodVisitor mv = g.mv;
        switch (e) {
            case IntImm c -> g.lconst(c.value());
            case Binary b
            when b.dtype() == DType.INT32
                    && (b.op() == BinaryOp.ADD || b.op() == BinaryOp.SUB || b.op() == BinaryOp.MUL) -> {
                emitLong(g, b.a());
                emitLong(g, b.b());
                mv.visitInsn(
                        switch (b.op()) {
                            case ADD -> LADD;
                            case SUB -> LSUB;
                            default -> LMUL;
                        });
            }
            default -> {
                emit(g, e);
                if (JType.of(e.dtype()) == JType.INT) mv.visitInsn(I2L);
            }
        }
    }

    static long[] constStrides(MethodGen g, Buffer b) {
        try {
            return b.constStrides();
        } catch (KilnException e) {
            throw new KilnException(
                    "function '" + g.cls.func.name() + "': " + e.getMessage()
                            + "; the JVM backend needs constant strides",
                    e);
        }
    }

    static void load(MethodGen g, Buffer b, List<Expr> idx) {
        MethodGen.BufRef r = g.buffer(b, "loaded from");
        g.mv.visitVarInsn(ALOAD, r.segSlot());
        Layout lay = layout(b.dtype());
        lay.push(g.mv);
        address(g, b, idx, r.byteBase());
        loadTail(g, b.dtype());
    }

    /** With segment, layout and byte offset on the stack: reads the element and converts it to its JType. */
    static void loadTail(MethodGen g, DType t) {
        MethodVisitor mv = g.mv;
        Layout lay = layout(t);
        mv.visitMethodInsn(INVOKEINTERFACE, SEGMENT, "get", "(" + lay.type() + "J)" + lay.desc(), true);
        switch (t) {
            case UINT8 -> {
                g.iconst(0xFF);
                mv.visitInsn(IAND);
            }
            case BOOL -> g.boolFromJump(IFNE);
            case FLOAT16 -> g.invokeStatic(NUMERICS, "fromFloat16Bits", "(S)D");
            case BFLOAT16 -> g.invokeStatic(NUMERICS, "fromBFloat16Bits", "(S)D");
            case INT8, INT16, INT32, INT64, FLOAT32, FLOAT64 -> {}
        }
    }

    /** With segment, layout, byte offset and the value (in its JType) on the stack: writes it. */
    static void storeTail(MethodGen g, DType t) {
        MethodVisitor mv = g.mv;
        switch (t) {
            case INT8, UINT8, BOOL -> mv.visitInsn(I2B);
            case INT16 -> mv.visitInsn(I2S);
            case FLOAT16 -> g.invokeStatic(NUMERICS, "toFloat16Bits", "(D)S");
            case BFLOAT16 -> g.invokeStatic(NUMERICS, "toBFloat16Bits", "(D)S");
            case INT32, INT64, FLOAT32, FLOAT64 -> {}
        }
        Layout lay = layout(t);
        mv.visitMethodInsn(INVOKEINTERFACE, SEGMENT, "set", "(" + lay.type() + "J" + lay.desc() + ")V", true);
    }

    // ---- operators on stack operands -----------------------------------------------------------------

    /** Reduces the int on the stack to integer type {@code t} (wrapping). */
    static void wrapInt(MethodGen g, DType t) {
        switch (t) {
            case INT8 -> g.mv.visitInsn(I2B);
            case INT16 -> g.mv.visitInsn(I2S);
            case UINT8 -> {
                g.iconst(0xFF);
                g.mv.visitInsn(IAND);
            }
            default -> {}
        }
    }

    /** Rounds the double on the stack to float16 or bfloat16; nothing for other types. */
    static void roundHalf(MethodGen g, DType t) {
        if (t == DType.FLOAT16) g.invokeStatic(NUMERICS, "roundToFloat16", "(D)D");
        else if (t == DType.BFLOAT16) g.invokeStatic(NUMERICS, "roundToBFloat16", "(D)D");
    }

    /** {@code a op b} with both operands of type {@code t} on the stack; {@code site} names it in errors. */
    static void binaryOp(MethodGen g, BinaryOp op, DType t, Expr site) {
        MethodVisitor mv = g.mv;
        JType j = JType.of(t);
        if (t.isFloat()) {
            String d = j.desc;
            switch (op) {
                case ADD -> mv.visitInsn(j == JType.FLOAT ? FADD : DADD);
                case SUB -> mv.visitInsn(j == JType.FLOAT ? FSUB : DSUB);
                case MUL -> mv.visitInsn(j == JType.FLOAT ? FMUL : DMUL);
                case DIV -> mv.visitInsn(j == JType.FLOAT ? FDIV : DDIV);
                case MIN -> g.invokeStatic("java/lang/Math", "min", "(" + d + d + ")" + d);
                case MAX -> g.invokeStatic("java/lang/Math", "max", "(" + d + d + ")" + d);
                case FLOORDIV, FLOORMOD, TRUNCDIV, TRUNCMOD -> throw new KilnException(op.symbol() + " on " + t);
            }
            if (op != BinaryOp.MIN && op != BinaryOp.MAX) roundHalf(g, t);
            return;
        }
        boolean l = j == JType.LONG;
        String d = j.desc;
        switch (op) {
            case ADD -> mv.visitInsn(l ? LADD : IADD);
            case SUB -> mv.visitInsn(l ? LSUB : ISUB);
            case MUL -> mv.visitInsn(l ? LMUL : IMUL);
            case MIN -> g.invokeStatic("java/lang/Math", "min", "(" + d + d + ")" + d);
            case MAX -> g.invokeStatic("java/lang/Math", "max", "(" + d + d + ")" + d);
            case FLOORDIV, FLOORMOD, TRUNCDIV, TRUNCMOD -> {
                if (divisionByConstant(g, op, j, site)) break;
                mv.visitLdcInsn(ExprPrinter.print(site) + " in function '" + g.cls.func.name() + "'");
                String name =
                        switch (op) {
                            case FLOORDIV -> "floorDiv";
                            case FLOORMOD -> "floorMod";
                            case TRUNCDIV -> "truncDiv";
                            default -> "truncMod";
                        };
                g.invokeStatic(OPS, name, "(" + d + d + "Ljava/lang/String;)" + d);
            }
            case DIV -> throw new KilnException("div on integer type " + t);
        }
        if (!l && op != BinaryOp.MIN && op != BinaryOp.MAX) wrapInt(g, t);
    }

    /**
     * Whether the constant-divisor fast path of integer division is on: it is unless the system
     * property {@code kiln.jvm.inlineDivision} is {@code false} (read at each compile, for A/B
     * measurements with the compile cache cleared).
     */
    static boolean inlinesDivision() {
        return !"false".equals(System.getProperty("kiln.jvm.inlineDivision"));
    }

    /**
     * Integer division or remainder by a constant divisor (floor: positive; trunc: non-zero) as plain
     * bytecode, with {@code a} and the constant on the stack: no call to {@link JvmOps}, so nothing
     * for C2 to inline (a large method stops inlining calls at {@code NodeCountInliningCutoff}, and a
     * call left in a loop spills every vector register around it) and an expression C2 strength-reduces
     * and hoists out of loops. floordiv(a, c) = a / c + ((a % c) >> 31); floormod(a, c) = r + ((r >> 31)
     * &amp; c) with r = a % c, exact as {@link Math#floorDiv} and {@link Math#floorMod} for c &gt; 0. Returns
     * false (nothing emitted) when the divisor is not such a constant.
     */
    private static boolean divisionByConstant(MethodGen g, BinaryOp op, JType j, Expr site) {
        if (!(site instanceof Binary b) || !(b.b() instanceof IntImm k) || !inlinesDivision()) return false;
        long c = k.value();
        boolean floor = op == BinaryOp.FLOORDIV || op == BinaryOp.FLOORMOD;
        if (floor ? c <= 0 : c == 0) return false;
        MethodVisitor mv = g.mv;
        boolean l = j == JType.LONG;
        int mark = g.mark();
        MethodGen.Local x = new MethodGen.Local(j, g.newLocal(j));
        mv.visitInsn(l ? POP2 : POP);
        g.store(x);
        g.load(x);
        g.intConst(j, c);
        switch (op) {
            case TRUNCDIV -> mv.visitInsn(l ? LDIV : IDIV);
            case TRUNCMOD -> mv.visitInsn(l ? LREM : IREM);
            case FLOORDIV -> {
                mv.visitInsn(l ? LDIV : IDIV);
                g.load(x);
                g.intConst(j, c);
                mv.visitInsn(l ? LREM : IREM);
                g.iconst(l ? 63 : 31);
                mv.visitInsn(l ? LSHR : ISHR);
                mv.visitInsn(l ? LADD : IADD);
            }
            case FLOORMOD -> {
                mv.visitInsn(l ? LREM : IREM);
                mv.visitInsn(l ? DUP2 : DUP);
                g.iconst(l ? 63 : 31);
                mv.visitInsn(l ? LSHR : ISHR);
                g.intConst(j, c);
                mv.visitInsn(l ? LAND : IAND);
                mv.visitInsn(l ? LADD : IADD);
            }
            default -> throw new IllegalStateException(op.toString());
        }
        g.release(mark);
        return true;
    }

    /** {@code a op b} with both operands of type {@code t} on the stack; leaves 0 or 1. */
    static void compareOp(MethodGen g, CompareOp op, DType t) {
        MethodVisitor mv = g.mv;
        JType j = JType.of(t);
        if (j == JType.INT) {
            g.boolFromJump(
                    switch (op) {
                        case EQ -> IF_ICMPEQ;
                        case NE -> IF_ICMPNE;
                        case LT -> IF_ICMPLT;
                        case LE -> IF_ICMPLE;
                        case GT -> IF_ICMPGT;
                        case GE -> IF_ICMPGE;
                    });
            return;
        }
        // LCMP; for floats, the variant that makes a NaN fail the test (IEEE: only != holds with NaN)
        boolean lessTest = op == CompareOp.LT || op == CompareOp.LE;
        mv.visitInsn(
                switch (j) {
                    case LONG -> LCMP;
                    case FLOAT -> lessTest ? FCMPG : FCMPL;
                    case DOUBLE -> lessTest ? DCMPG : DCMPL;
                    case INT -> throw new IllegalStateException();
                });
        g.boolFromJump(
                switch (op) {
                    case EQ -> IFEQ;
                    case NE -> IFNE;
                    case LT -> IFLT;
                    case LE -> IFLE;
                    case GT -> IFGT;
                    case GE -> IFGE;
                });
    }

    /** Converts the value on the stack from {@code from} to {@code to}, as {@link dev.kiln.ir.Cast} says. */
    static void cast(MethodGen g, DType from, DType to) {
        MethodVisitor mv = g.mv;
        if (from == to) return;
        JType jf = JType.of(from), jt = JType.of(to);
        if (to == DType.BOOL) {
            switch (jf) {
                case INT -> g.boolFromJump(IFNE);
                case LONG -> {
                    mv.visitInsn(LCONST_0);
                    mv.visitInsn(LCMP);
                    g.boolFromJump(IFNE);
                }
                case FLOAT -> {
                    mv.visitInsn(FCONST_0);
                    mv.visitInsn(FCMPL); // NaN gives -1: true
                    g.boolFromJump(IFNE);
                }
                case DOUBLE -> {
                    mv.visitInsn(DCONST_0);
                    mv.visitInsn(DCMPL);
                    g.boolFromJump(IFNE);
                }
            }
            return;
        }
        if (to.isInt()) {
            if (from.isFloat()) {
                if (to == DType.INT32) mv.visitInsn(jf == JType.FLOAT ? F2I : D2I); // saturating, NaN is 0
                else if (to == DType.INT64) mv.visitInsn(jf == JType.FLOAT ? F2L : D2L);
                else {
                    if (jf == JType.FLOAT) mv.visitInsn(F2D);
                    g.lconst(to.minInt());
                    g.lconst(to.maxInt());
                    g.invokeStatic(OPS, "saturate", "(DJJ)I");
                }
                return;
            }
            if (jf == JType.LONG && jt == JType.INT) mv.visitInsn(L2I);
            if (jf == JType.INT && jt == JType.LONG) mv.visitInsn(I2L);
            if (jt == JType.INT) wrapInt(g, to);
            return;
        }
        // to a floating type
        if (!from.isFloat()) {
            switch (to) {
                case FLOAT32 -> mv.visitInsn(jf == JType.LONG ? L2F : I2F);
                case FLOAT64 -> mv.visitInsn(jf == JType.LONG ? L2D : I2D);
                case FLOAT16, BFLOAT16 -> {
                    if (jf == JType.INT) mv.visitInsn(I2L);
                    g.invokeStatic(OPS, to == DType.FLOAT16 ? "longToFloat16" : "longToBFloat16", "(J)D");
                }
                default -> throw new IllegalStateException();
            }
            return;
        }
        if (jf == JType.FLOAT) mv.visitInsn(F2D); // exact
        if (to == DType.FLOAT32) mv.visitInsn(D2F);
        else roundHalf(g, to); // float64 keeps the (exact) double
    }

    /**
     * An intrinsic with its operands on the stack. {@code f32AsDouble}: float32 operands were pushed as
     * doubles (every float32 intrinsic but fma and abs is computed in double and rounded once).
     */
    static void intrinsic(MethodGen g, Intrinsic fn, DType t, boolean f32AsDouble) {
        MethodVisitor mv = g.mv;
        if (!t.isFloat()) { // abs on integers wraps: abs(int8 -128) is -128
            String d = JType.of(t).desc;
            g.invokeStatic("java/lang/Math", "abs", "(" + d + ")" + d);
            wrapInt(g, t);
            return;
        }
        JType j = JType.of(t);
        if (fn == Intrinsic.FMA) {
            String d = j.desc;
            g.invokeStatic("java/lang/Math", "fma", "(" + d + d + d + ")" + d);
            roundHalf(g, t);
            return;
        }
        if (fn == Intrinsic.ABS) {
            g.invokeStatic("java/lang/Math", "abs", "(" + j.desc + ")" + j.desc);
            return;
        }
        boolean exact = fn == Intrinsic.FLOOR || fn == Intrinsic.CEIL || fn == Intrinsic.ROUND;
        switch (fn) {
            case EXP -> g.invokeStatic("java/lang/Math", "exp", "(D)D");
            case LOG -> g.invokeStatic("java/lang/Math", "log", "(D)D");
            case SQRT -> g.invokeStatic("java/lang/Math", "sqrt", "(D)D");
            case RSQRT -> g.invokeStatic(OPS, "rsqrt", "(D)D");
            case TANH -> g.invokeStatic("java/lang/Math", "tanh", "(D)D");
            case SIGMOID -> g.invokeStatic(OPS, "sigmoid", "(D)D");
            case ERF -> g.invokeStatic(OPS, "erf", "(D)D");
            case POW -> g.invokeStatic("java/lang/Math", "pow", "(DD)D");
            case EXACT_DIV -> mv.visitInsn(f32AsDouble || j == JType.DOUBLE ? DDIV : FDIV); // the JVM never relaxes
            case FLOOR -> g.invokeStatic("java/lang/Math", "floor", "(D)D");
            case CEIL -> g.invokeStatic("java/lang/Math", "ceil", "(D)D");
            case ROUND -> g.invokeStatic("java/lang/Math", "rint", "(D)D");
            case ABS, FMA -> throw new IllegalStateException();
        }
        if (f32AsDouble) mv.visitInsn(D2F);
        else if (!exact) roundHalf(g, t);
    }
}
