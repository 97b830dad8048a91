package dev.kiln.jit.jvm;

import dev.kiln.ir.Buffer;
import dev.kiln.ir.KilnException;
import dev.kiln.ir.Var;
import java.util.IdentityHashMap;
import java.util.Map;
import org.objectweb.asm.Label;
import org.objectweb.asm.MethodVisitor;
import org.objectweb.asm.Opcodes;
import org.objectweb.asm.tree.MethodNode;

/**
 * The state of one generated method: its bytecode (an ASM {@link MethodNode}, so a prologue can be
 * inserted once the body is known), its locals, what each variable and buffer of the loop IR is
 * bound to, and the scratch context its allocations are placed in.
 */
final class MethodGen {
    /** A variable held in a local of the given type. */
    record Local(JType type, int slot) {}

    /** A buffer: the local holding its segment, and the byte offset of element 0 inside it. */
    record BufRef(int segSlot, long byteBase) {}

    /** Where the allocations of one thread's share of a kernel go: their total size so far. */
    static final class ScratchContext {
        final int level;
        long total;

        ScratchContext(int level) {
            this.level = level;
        }

        /** Reserves {@code bytes} bytes, aligned; returns their offset. */
        long reserve(long bytes) {
            long off = total;
            total = Math.addExact(total, (bytes + JvmScratch.ALIGN - 1) / JvmScratch.ALIGN * JvmScratch.ALIGN);
            return off;
        }
    }

    final BytecodeGen cls;
    final MethodNode node;
    final MethodVisitor mv;
    final Map<Var, Local> vars = new IdentityHashMap<>();
    final Map<Buffer, BufRef> bufs = new IdentityHashMap<>();
    final ScratchContext scratch;
    /** The local that holds the scratch segment (filled in the prologue, or a parameter). */
    final int scratchSlot;
    /** Whether this method is (part of) the body of a parallel loop: nested parallel loops run serially. */
    final boolean inParallel;
    /** The register promotions of the serial loops being emitted, outermost first ({@link Promotion}). */
    final java.util.List<Promotion> promotions = new java.util.ArrayList<>();
    /** The register-tile loop this method was outlined for ({@link TileMethods}), emitted here in place; or null. */
    dev.kiln.tir.For tileLoop;
    /** Selects whose guard was hoisted out of the serial loop being emitted ({@link InvariantGuards}). */
    final Map<dev.kiln.ir.Select, InvariantGuards.Guard> guards = new java.util.HashMap<>();

    private int nextLocal;

    MethodGen(
            BytecodeGen cls,
            MethodNode node,
            int firstLocal,
            ScratchContext scratch,
            int scratchSlot,
            boolean inParallel) {
        this.cls = cls;
        this.node = node;
        this.mv = node;
        this.nextLocal = firstLocal;
        this.scratch = scratch;
        this.inParallel = inParallel;
        this.scratchSlot = scratchSlot >= 0 ? scratchSlot : newRefLocal();
    }

    int newLocal(JType t) {
        int s = nextLocal;
        nextLocal += t.size;
        return s;
    }

    /** A local for an object reference (a segment, a vector, an array). */
    int newRefLocal() {
        return nextLocal++;
    }

    int mark() {
        return nextLocal;
    }

    /** Frees the locals allocated since {@code mark} (their scope has ended). */
    void release(int mark) {
        nextLocal = mark;
    }

    Local bind(Var v, Local l) {
        return vars.put(v, l);
    }

    void unbind(Var v, Local prev) {
        if (prev == null) vars.remove(v);
        else vars.put(v, prev);
    }

    Local var(Var v) {
        Local l = vars.get(v);
        if (l == null) {
            throw new KilnException("variable '" + v.name() + "' (" + v.dtype() + ") is used in function '"
                    + cls.func.name() + "' outside any loop or let that binds it");
        }
        return l;
    }

    BufRef buffer(Buffer b, String how) {
        BufRef r = bufs.get(b.base());
        if (r == null) {
            throw new KilnException("buffer '" + b.name() + "' is " + how + " in function '" + cls.func.name()
                    + "' but is neither a parameter nor allocated around this use");
        }
        return r;
    }

    // ---- constants -------------------------------------------------------------------------------

    void iconst(int v) {
        if (v >= -1 && v <= 5) mv.visitInsn(Opcodes.ICONST_0 + v);
        else if (v >= Byte.MIN_VALUE && v <= Byte.MAX_VALUE) mv.visitIntInsn(Opcodes.BIPUSH, v);
        else if (v >= Short.MIN_VALUE && v <= Short.MAX_VALUE) mv.visitIntInsn(Opcodes.SIPUSH, v);
        else mv.visitLdcInsn(v);
    }

    void lconst(long v) {
        if (v == 0 || v == 1) mv.visitInsn(Opcodes.LCONST_0 + (int) v);
        else mv.visitLdcInsn(v);
    }

    /** Pushes integer constant {@code v} as a value of {@code t} (INT or LONG). */
    void intConst(JType t, long v) {
        if (t == JType.LONG) lconst(v);
        else iconst((int) v);
    }

    void fconst(float v) {
        if (Float.floatToRawIntBits(v) == 0) mv.visitInsn(Opcodes.FCONST_0);
        else if (v == 1f) mv.visitInsn(Opcodes.FCONST_1);
        else mv.visitLdcInsn(v);
    }

    void dconst(double v) {
        if (Double.doubleToRawLongBits(v) == 0) mv.visitInsn(Opcodes.DCONST_0);
        else if (v == 1d) mv.visitInsn(Opcodes.DCONST_1);
        else mv.visitLdcInsn(v);
    }

    void load(Local l) {
        mv.visitVarInsn(l.type().load, l.slot());
    }

    void store(Local l) {
        mv.visitVarInsn(l.type().store, l.slot());
    }

    /** Turns the int on the stack into 1 if it jumps with {@code opcode}, else 0. */
    void boolFromJump(int opcode) {
        Label yes = new Label(), end = new Label();
        mv.visitJumpInsn(opcode, yes);
        mv.visitInsn(Opcodes.ICONST_0);
        mv.visitJumpInsn(Opcodes.GOTO, end);
        mv.visitLabel(yes);
        mv.visitInsn(Opcodes.ICONST_1);
        mv.visitLabel(end);
    }

    void invokeStatic(String owner, String name, String desc) {
        mv.visitMethodInsn(Opcodes.INVOKESTATIC, owner, name, desc, false);
    }

    void invokeStaticInterface(String owner, String name, String desc) {
        mv.visitMethodInsn(Opcodes.INVOKESTATIC, owner, name, desc, true);
    }
}
