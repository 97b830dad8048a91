package dev.kiln.jit.jvm;

import static org.objectweb.asm.Opcodes.ALOAD;
import static org.objectweb.asm.Opcodes.I2L;
import static org.objectweb.asm.Opcodes.IAND;
import static org.objectweb.asm.Opcodes.ICONST_M1;
import static org.objectweb.asm.Opcodes.IFNE;
import static org.objectweb.asm.Opcodes.INEG;
import static org.objectweb.asm.Opcodes.INVOKEVIRTUAL;
import static org.objectweb.asm.Opcodes.IOR;
import static org.objectweb.asm.Opcodes.IXOR;
import static org.objectweb.asm.Opcodes.LADD;
import static org.objectweb.asm.Opcodes.LMUL;
import static org.objectweb.asm.Opcodes.LSUB;

import dev.kiln.ir.Binary;
import dev.kiln.ir.BufferLoad;
import dev.kiln.ir.DType;
import dev.kiln.ir.Expr;
import dev.kiln.ir.Exprs;
import dev.kiln.ir.FloatImm;
import dev.kiln.ir.IntImm;
import dev.kiln.ir.Select;
import dev.kiln.ir.Var;
import dev.kiln.tir.For;
import dev.kiln.tir.Stmts;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.objectweb.asm.Label;
import org.objectweb.asm.MethodVisitor;

/**
 * Guarded loads whose guard does not change in a serial loop, made branch-free inside it: a padded
 * convolution's input read {@code select(pad test, data[... + rc], 0.0f)} in its channel loop {@code rc}
 * tests up to four comparisons and branches around a scalar load on every step, and the load, being
 * conditional, keeps its bounds check in the loop. Before the loop, the generator evaluates the test
 * once into a bit mask {@code m} (all ones or zero) and the load's address at the loop's first step,
 * replaced by a safe address inside the buffer when the test fails; in the loop it reads
 * {@code data[base + rc * stride]} unconditionally and keeps {@code bits & m | bits(f) & ~m}. Exact:
 * the same value, NaN payloads and signed zeros included, as the select; the safe address is read
 * only to be masked away. A value the vectorized loop broadcasts is masked after the broadcast, one
 * vector AND ({@code -Dkiln.jvm.vectorGuardMask=false}: as a scalar before it, which costs two moves
 * between register files more per load). The address is linear in the loop variable with a loop-invariant base, the
 * form C2's range-check elimination takes out of the loop. (Reading a segment of zeros instead when the
 * test fails, with no mask, was tried: the conv ran about 2x slower in a same-process A/B on a loaded
 * machine; why was not read in the compiled code.)
 *
 * <p>Applied to float32 selects whose true value is a load linear in the loop variable (constant
 * coefficients, a constant loop start and extent), whose false value is a constant, whose condition
 * reads no buffer and only variables bound outside the loop, and whose addresses over the loop's range
 * stay inside the buffer when started from the buffer's first element. Off when the system property
 * {@code kiln.jvm.hoistGuards} is {@code false} (read at each compile, for A/B measurements).
 */
final class InvariantGuards {
    private InvariantGuards() {}

    /** A hoisted guard: the locals holding the mask, the base address and the masked false bits. */
    record Guard(Var loopVar, MethodGen.BufRef buf, int maskSlot, int baseSlot, int falseSlot, long stride) {
        /** Pushes the select's value (a float) inside the loop. */
        void emit(MethodGen g) {
            emitLoad(g);
            MethodVisitor mv = g.mv;
            g.invokeStatic("java/lang/Float", "floatToRawIntBits", "(F)I");
            mv.visitVarInsn(org.objectweb.asm.Opcodes.ILOAD, maskSlot);
            mv.visitInsn(IAND);
            if (falseSlot >= 0) {
                mv.visitVarInsn(org.objectweb.asm.Opcodes.ILOAD, falseSlot);
                mv.visitInsn(IOR);
            }
            g.invokeStatic("java/lang/Float", "intBitsToFloat", "(I)F");
        }

        /** With a FloatVector broadcast of {@link #emitLoad}'s value on the stack: masks its lanes' bits. */
        void maskVector(MethodGen g) {
            MethodVisitor mv = g.mv;
            String v = "jdk/incubator/vector/";
            mv.visitMethodInsn(INVOKEVIRTUAL, v + "FloatVector", "reinterpretAsInts", "()L" + v + "IntVector;", false);
            mv.visitVarInsn(org.objectweb.asm.Opcodes.ILOAD, maskSlot);
            mv.visitMethodInsn(INVOKEVIRTUAL, v + "IntVector", "and", "(I)L" + v + "IntVector;", false);
            if (falseSlot >= 0) {
                mv.visitVarInsn(org.objectweb.asm.Opcodes.ILOAD, falseSlot);
                mv.visitMethodInsn(INVOKEVIRTUAL, v + "IntVector", "or", "(I)L" + v + "IntVector;", false);
            }
            mv.visitMethodInsn(
                    INVOKEVIRTUAL, v + "IntVector", "reinterpretAsFloats", "()L" + v + "FloatVector;", false);
        }

        /** Pushes the unmasked load (a float) inside the loop. */
        void emitLoad(MethodGen g) {
            MethodVisitor mv = g.mv;
            mv.visitVarInsn(ALOAD, buf.segSlot());
            ScalarGen.layout(DType.FLOAT32).push(mv);
            mv.visitVarInsn(org.objectweb.asm.Opcodes.LLOAD, baseSlot);
            MethodGen.Local v = g.var(loopVar);
            g.load(v);
            if (v.type() == JType.INT) mv.visitInsn(I2L);
            g.lconst(stride);
            mv.visitInsn(LMUL);
            mv.visitInsn(LADD);
            ScalarGen.loadTail(g, DType.FLOAT32);
        }
    }

    /** Whether a broadcast guarded value is masked as a vector (one AND per vector) rather than as a scalar. */
    static boolean vectorMask() {
        return !"false".equals(System.getProperty("kiln.jvm.vectorGuardMask"));
    }

    static boolean enabled() {
        return !"false".equals(System.getProperty("kiln.jvm.hoistGuards"));
    }

    /**
     * Emits, before serial loop {@code f}, the guards of the qualifying selects in its body and registers
     * them in {@code g.guards} (the caller removes them with {@link #remove} after the loop); returns the
     * selects registered.
     */
    static List<Select> hoist(MethodGen g, For f) {
        List<Select> done = new ArrayList<>();
        DType vt = f.var().dtype();
        if (!enabled()
                || vt != DType.INT32 && vt != DType.INT64
                || !(f.min() instanceof IntImm lo)
                || !(f.extent() instanceof IntImm ext)
                || ext.value() <= 0) {
            return done;
        }
        List<Select> found = new ArrayList<>();
        Stmts.forEachExpr(
                f.body(),
                e -> Exprs.forEach(e, x -> {
                    if (x instanceof Select s && !found.contains(s)) found.add(s);
                }));
        for (Select s : found) {
            if (g.guards.containsKey(s)) continue;
            Guard h = guard(g, f, s, lo.value(), ext.value());
            if (h != null) {
                g.guards.put(s, h);
                done.add(s);
            }
        }
        return done;
    }

    static void remove(MethodGen g, List<Select> hoisted) {
        for (Select s : hoisted) g.guards.remove(s);
    }

    private static Guard guard(MethodGen g, For f, Select s, long lo, long ext) {
        if (s.dtype() != DType.FLOAT32
                || !(s.f() instanceof FloatImm fv)
                || !(s.t() instanceof BufferLoad l)
                || l.buffer().dtype() != DType.FLOAT32
                || !invariant(g, s.cond())) {
            return null;
        }
        Var rc = f.var();
        long[] strides;
        long[] shape;
        try {
            strides = ScalarGen.constStrides(g, l.buffer());
            shape = l.buffer().constShape();
        } catch (RuntimeException e) {
            return null;
        }
        long stride = 0; // bytes per step of rc
        long span = 1; // elements the buffer covers from its first one
        List<Expr> first = new ArrayList<>();
        for (int d = 0; d < l.indices().size(); d++) {
            Expr i = l.indices().get(d);
            Long c = coefficient(i, rc);
            if (c == null || strides[d] < 0) return null;
            stride = Math.addExact(stride, Math.multiplyExact(c, strides[d] * 4));
            span = Math.addExact(span, Math.multiplyExact(shape[d] - 1, strides[d]));
            Expr i0 = Exprs.substitute(i, Map.of(rc, new IntImm(rc.dtype(), lo)));
            if (!invariant(g, i0)) return null;
            first.add(i0);
        }
        long reach = Math.multiplyExact(Math.abs(stride), ext - 1) + 4;
        if (reach > Math.multiplyExact(span, 4)) return null;
        MethodGen.BufRef buf = g.buffer(l.buffer(), "loaded from");
        long safe = buf.byteBase() + (stride < 0 ? -stride * (ext - 1) : 0);
        MethodVisitor mv = g.mv;
        // mask = -(cond): all ones when the guard holds
        int mask = g.newLocal(JType.INT);
        ScalarGen.emit(g, s.cond());
        mv.visitInsn(INEG);
        mv.visitVarInsn(org.objectweb.asm.Opcodes.ISTORE, mask);
        int fbits = Float.floatToRawIntBits((float) fv.value());
        int falseSlot = -1;
        if (fbits != 0) {
            falseSlot = g.newLocal(JType.INT);
            mv.visitVarInsn(org.objectweb.asm.Opcodes.ILOAD, mask);
            mv.visitInsn(ICONST_M1);
            mv.visitInsn(IXOR);
            g.iconst(fbits);
            mv.visitInsn(IAND);
            mv.visitVarInsn(org.objectweb.asm.Opcodes.ISTORE, falseSlot);
        }
        // base = (cond ? address at rc = lo : safe) - lo * stride
        int base = g.newLocal(JType.LONG);
        Label ok = new Label(), end = new Label();
        mv.visitVarInsn(org.objectweb.asm.Opcodes.ILOAD, mask);
        mv.visitJumpInsn(IFNE, ok);
        g.lconst(safe);
        mv.visitJumpInsn(org.objectweb.asm.Opcodes.GOTO, end);
        mv.visitLabel(ok);
        ScalarGen.address(g, l.buffer(), first, buf.byteBase());
        mv.visitLabel(end);
        g.lconst(Math.multiplyExact(lo, stride));
        mv.visitInsn(LSUB);
        mv.visitVarInsn(org.objectweb.asm.Opcodes.LSTORE, base);
        return new Guard(rc, buf, mask, base, falseSlot, stride);
    }

    /** Whether {@code e} reads no buffer and only variables already bound (outside the loop). */
    private static boolean invariant(MethodGen g, Expr e) {
        boolean[] ok = {true};
        Exprs.forEach(e, x -> {
            if (x instanceof BufferLoad || x instanceof Var v && !g.vars.containsKey(v)) ok[0] = false;
        });
        return ok[0];
    }

    /** The constant coefficient of {@code v} in integer index {@code e}, or null when it is not linear in it. */
    static Long coefficient(Expr e, Var v) {
        if (!Exprs.uses(e, v)) return 0L;
        if (e == v) return 1L;
        if (e instanceof Binary b) {
            switch (b.op()) {
                case ADD, SUB -> {
                    Long x = coefficient(b.a(), v), y = coefficient(b.b(), v);
                    if (x == null || y == null) return null;
                    return b.op() == dev.kiln.ir.BinaryOp.ADD ? Math.addExact(x, y) : Math.subtractExact(x, y);
                }
                case MUL -> {
                    if (b.a() instanceof IntImm c) return mulOrNull(coefficient(b.b(), v), c.value());
                    if (b.b() instanceof IntImm c) return mulOrNull(coefficient(b.a(), v), c.value());
                    return null;
                }
                default -> {
                    return null;
                }
            }
        }
        return null;
    }

    private static Long mulOrNull(Long x, long c) {
        return x == null ? null : Math.multiplyExact(x, c);
    }
}
