package dev.kiln.jit;

import dev.kiln.ir.Buffer;
import dev.kiln.ir.DType;
import dev.kiln.ir.KilnException;
import java.util.List;

/**
 * Loads and stores. The element offset {@code sum(index[d] * stride[d])} is computed in i64 from
 * the buffer's constant strides. Inside a vectorized loop the offset's form picks the access:
 * lane-linear with step 1 is one contiguous vector load or store, the same in every lane is a
 * scalar access, anything else a gather or scatter; accesses under a partial mask use LLVM's
 * masked intrinsics (a scalar access under a mask runs only if some lane is active).
 */
final class Memory {
    private Memory() {}

    /** The element offset of {@code idx} in buffer {@code b}, as an i64 value. */
    static Val offset(CodeGen g, Buffer b, List<Val> idx) {
        long[] strides = constStrides(g, b);
        Val off = Val.uniform("0", DType.INT64);
        for (int d = 0; d < idx.size(); d++) {
            if (strides[d] == 0) continue;
            Val i = widen(g, idx.get(d));
            Val term = strides[d] == 1 ? i : scale(g, i, strides[d]);
            off = off.isLiteral() && off.ref().equals("0") ? term : add(g, off, term);
        }
        return off;
    }

    private static long[] constStrides(CodeGen g, Buffer b) {
        try {
            return b.constStrides();
        } catch (KilnException e) {
            throw new KilnException("function '" + g.funcName + "': buffer '" + b.name()
                    + "' has symbolic strides, which the LLVM backend does not support yet: " + b.strides());
        }
    }

    /** {@code v} as an i64 (sign- or zero-extended by its type); a lane-linear value keeps its step. */
    static Val widen(CodeGen g, Val v) {
        if (v.dtype() == DType.INT64) return v;
        String op = v.dtype().isUnsigned() ? "zext" : "sext";
        if (v.form() == Val.Form.LINEAR) {
            return Val.linear(
                    g.fn.emit(op + " " + IrTypes.reg(v.dtype()) + " " + v.ref() + " to i64"), v.step(), DType.INT64);
        }
        return g.convert(op, v, "i64", DType.INT64);
    }

    private static Val scale(CodeGen g, Val v, long s) {
        String c = Long.toString(s);
        if (v.form() == Val.Form.LINEAR) {
            return Val.linear(g.fn.emit("mul nsw i64 " + v.ref() + ", " + c), v.step() * s, DType.INT64);
        }
        return g.op2("mul nsw", v, Val.uniform(c, DType.INT64), DType.INT64);
    }

    private static Val add(CodeGen g, Val a, Val b) {
        if (a.form() != Val.Form.VARYING && b.form() != Val.Form.VARYING) {
            return Val.linear(g.fn.emit("add nsw i64 " + a.ref() + ", " + b.ref()), a.step() + b.step(), DType.INT64);
        }
        return g.op2("add nsw", a, b, DType.INT64);
    }

    // ---- loads ---------------------------------------------------------------------------------

    static Val load(CodeGen g, Buffer b, List<Val> idx) {
        Val off = offset(g, b, idx);
        DType t = b.dtype();
        String mt = IrTypes.mem(t);
        int align = t.bytes();
        String base = g.buffer(b);
        if (off.isUniform()) {
            if (g.lanes == 1 || g.mask == null) return scalarLoad(g, base, off, t);
            // only touch memory if some lane wants the value
            String any = g.anyLane(g.mask);
            String yes = g.fn.label("ld"), join = g.fn.label("ldjoin");
            String from = g.fn.currentBlock();
            g.fn.condBr(any, yes, join);
            g.fn.block(yes);
            Val v = scalarLoad(g, base, off, t);
            String yesEnd = g.fn.currentBlock();
            g.fn.br(join);
            g.fn.block(join);
            String phi = g.fn.emit(
                    "phi " + IrTypes.reg(t) + " [ " + v.ref() + ", %" + yesEnd + " ], [ poison, %" + from + " ]");
            return Val.uniform(phi, t);
        }
        String vmt = IrTypes.vec(mt, g.lanes);
        String raw;
        if (off.form() == Val.Form.LINEAR && off.step() == 1) {
            String p = g.fn.emit("getelementptr inbounds " + mt + ", ptr " + base + ", i64 " + off.ref());
            if (g.mask == null) {
                raw = g.fn.emit("load " + vmt + ", ptr " + p + ", align " + align);
            } else {
                String fn = "llvm.masked.load." + IrTypes.mangle(mt, g.lanes) + ".p0";
                g.mod.declare(fn, vmt, "ptr, i32, " + IrTypes.vec("i1", g.lanes) + ", " + vmt);
                raw = g.fn.emit("call " + vmt + " @" + fn + "(ptr " + p + ", i32 " + align + ", "
                        + IrTypes.vec("i1", g.lanes) + " " + g.mask.ref() + ", " + vmt + " poison)");
            }
        } else {
            String ptrs = pointers(g, base, mt, off);
            String fn = "llvm.masked.gather." + IrTypes.mangle(mt, g.lanes) + "." + IrTypes.mangle("ptr", g.lanes);
            String vp = IrTypes.vec("ptr", g.lanes);
            g.mod.declare(fn, vmt, vp + ", i32, " + IrTypes.vec("i1", g.lanes) + ", " + vmt);
            raw = g.fn.emit("call " + vmt + " @" + fn + "(" + vp + " " + ptrs + ", i32 " + align + ", "
                    + IrTypes.vec("i1", g.lanes) + " " + g.maskOperand() + ", " + vmt + " poison)");
        }
        return fromMemory(g, Val.varying(raw, t));
    }

    private static Val scalarLoad(CodeGen g, String base, Val off, DType t) {
        String mt = IrTypes.mem(t);
        String p = g.fn.emit("getelementptr inbounds " + mt + ", ptr " + base + ", i64 " + off.ref());
        String raw = g.fn.emit("load " + mt + ", ptr " + p + ", align " + t.bytes());
        return fromMemory(g, Val.uniform(raw, t));
    }

    /** {@code <lanes x ptr>} to the elements at the offsets. */
    private static String pointers(CodeGen g, String base, String mt, Val off) {
        String ov = g.vector(off);
        return g.fn.emit(
                "getelementptr inbounds " + mt + ", ptr " + base + ", " + IrTypes.vec("i64", g.lanes) + " " + ov);
    }

    /** A value in memory form (half, i16 bits, i8 bool) to register form. */
    private static Val fromMemory(CodeGen g, Val raw) {
        DType t = raw.dtype();
        return switch (t) {
            case FLOAT16 -> g.convertRaw("fpext", raw, "half", "float", t);
            case BFLOAT16 -> {
                Val wide = g.convertRaw("zext", raw, "i16", "i32", DType.INT32);
                Val shifted = g.op2("shl", wide, Val.uniform("16", DType.INT32), DType.INT32);
                yield g.convert("bitcast", shifted, "float", t);
            }
            case BOOL -> {
                String z = raw.isUniform() ? "0" : g.splat("0", "i8");
                String ty = raw.isUniform() ? "i8" : IrTypes.vec("i8", g.lanes);
                String r = g.fn.emit("icmp ne " + ty + " " + raw.ref() + ", " + z);
                yield raw.isUniform() ? Val.uniform(r, t) : Val.varying(r, t);
            }
            default -> raw;
        };
    }

    /** A register value to memory form; returns the operand text (without type). */
    private static String toMemory(CodeGen g, Val v) {
        DType t = v.dtype();
        Val src = v.form() == Val.Form.LINEAR ? Val.varying(g.vector(v), t) : v;
        return switch (t) {
            case FLOAT16 -> g.convertRaw("fptrunc", src, "float", "half", t).ref();
            case BFLOAT16 -> {
                Val bits = g.convert("bitcast", src, "i32", DType.INT32);
                Val high = g.op2("lshr", bits, Val.uniform("16", DType.INT32), DType.INT32);
                yield g.convertRaw("trunc", high, "i32", "i16", t).ref();
            }
            case BOOL -> g.convertRaw("zext", src, "i1", "i8", t).ref();
            default -> src.ref();
        };
    }

    // ---- stores --------------------------------------------------------------------------------

    static void store(CodeGen g, Buffer b, List<Val> idx, Val value) {
        Val off = offset(g, b, idx);
        DType t = b.dtype();
        String mt = IrTypes.mem(t);
        int align = t.bytes();
        String base = g.buffer(b);
        if (off.isUniform()) {
            if (!value.isUniform()) {
                throw new IllegalStateException("store to '" + b.name() + "' at a lane-independent index of a "
                        + "lane-dependent value reached code generation");
            }
            String m = toMemory(g, value);
            if (g.lanes == 1 || g.mask == null) {
                String p = g.fn.emit("getelementptr inbounds " + mt + ", ptr " + base + ", i64 " + off.ref());
                g.fn.line("store " + mt + " " + m + ", ptr " + p + ", align " + align);
                return;
            }
            String any = g.anyLane(g.mask);
            String yes = g.fn.label("st"), join = g.fn.label("stjoin");
            g.fn.condBr(any, yes, join);
            g.fn.block(yes);
            String p = g.fn.emit("getelementptr inbounds " + mt + ", ptr " + base + ", i64 " + off.ref());
            g.fn.line("store " + mt + " " + m + ", ptr " + p + ", align " + align);
            g.fn.br(join);
            g.fn.block(join);
            return;
        }
        Val vec = value.form() == Val.Form.VARYING ? value : Val.varying(g.vector(value), t);
        String m = toMemory(g, vec);
        String vmt = IrTypes.vec(mt, g.lanes);
        String vm = IrTypes.vec("i1", g.lanes);
        if (off.form() == Val.Form.LINEAR && off.step() == 1) {
            String p = g.fn.emit("getelementptr inbounds " + mt + ", ptr " + base + ", i64 " + off.ref());
            if (g.mask == null) {
                g.fn.line("store " + vmt + " " + m + ", ptr " + p + ", align " + align);
            } else {
                String fn = "llvm.masked.store." + IrTypes.mangle(mt, g.lanes) + ".p0";
                g.mod.declare(fn, "void", vmt + ", ptr, i32, " + vm);
                g.fn.line("call void @" + fn + "(" + vmt + " " + m + ", ptr " + p + ", i32 " + align + ", " + vm + " "
                        + g.mask.ref() + ")");
            }
            return;
        }
        String ptrs = pointers(g, base, mt, off);
        String vp = IrTypes.vec("ptr", g.lanes);
        String fn = "llvm.masked.scatter." + IrTypes.mangle(mt, g.lanes) + "." + IrTypes.mangle("ptr", g.lanes);
        g.mod.declare(fn, "void", vmt + ", " + vp + ", i32, " + vm);
        g.fn.line("call void @" + fn + "(" + vmt + " " + m + ", " + vp + " " + ptrs + ", i32 " + align + ", " + vm + " "
                + g.maskOperand() + ")");
    }
}
