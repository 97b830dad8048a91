package dev.kiln.jit.jvm;

import static org.objectweb.asm.Opcodes.*;

import dev.kiln.ir.Buffer;
import dev.kiln.ir.DType;
import dev.kiln.ir.Expr;
import dev.kiln.ir.ExprPrinter;
import dev.kiln.ir.Exprs;
import dev.kiln.ir.IntImm;
import dev.kiln.ir.Var;
import dev.kiln.tir.Allocate;
import dev.kiln.tir.Barrier;
import dev.kiln.tir.Evaluate;
import dev.kiln.tir.For;
import dev.kiln.tir.IfThenElse;
import dev.kiln.tir.Let;
import dev.kiln.tir.Pragma;
import dev.kiln.tir.Seq;
import dev.kiln.tir.Stmt;
import dev.kiln.tir.Store;
import java.util.List;
import org.objectweb.asm.Label;
import org.objectweb.asm.MethodVisitor;

/**
 * Vectorized loops on the Vector API. A loop of constant extent E runs in chunks of W lanes (W =
 * the target's vector bits over the widest lane type, at most E rounded up to a power of two): the
 * body is generated once over {@code FloatVector}/{@code DoubleVector}/{@code IntVector}/
 * {@code LongVector} values with the loop variable {@code base + lane}, for the full chunks, and once
 * more under a tail mask for the remainder. Expressions that do not depend on the loop variable are
 * computed as scalars and broadcast; bool values are masks; a conditional on a varying condition
 * narrows the mask its stores (and loads) run under.
 *
 * <p>Memory: an access whose address is {@code lane-0 address + lane} is one (masked)
 * {@code fromMemorySegment}/{@code intoMemorySegment}; any other varying address is done lane by
 * lane (scalar lanes). Operators without an exact Vector API counterpart (intrinsics other than fma,
 * sqrt and abs; integer division) run lane by lane with the scalar code, so every result equals the
 * interpreter's. Loops {@link VectorCheck} refuses run serially, with a note.
 */
final class VectorGen extends VectorExprs {
    private VectorGen(MethodGen g, Var var, int lanes, DType maskType, MethodGen.Local base) {
        super(g, var, lanes, maskType, base);
    }

    // ---- the loop ------------------------------------------------------------------------------------

    static void loop(MethodGen g, For f) {
        String name = "vectorized loop '" + f.var().name() + "' of function '" + g.cls.func.name() + "'";
        if (!g.cls.vectorApi) {
            serial(
                    g,
                    f,
                    name + " runs serially: the Vector API is not available (run the JVM with "
                            + "--add-modules jdk.incubator.vector)");
            return;
        }
        if (!(f.extent() instanceof IntImm e)) {
            serial(g, f, name + " runs serially: its extent " + ExprPrinter.print(f.extent()) + " is not a constant");
            return;
        }
        VectorCheck check = VectorCheck.of(f);
        if (check.reason != null) {
            serial(g, f, name + " runs serially: " + check.reason);
            return;
        }
        long extent = e.value();
        int w = width(g.cls.vectorBits, check.maxBits, extent);
        if (w < 2 || extent < 2) {
            serial(
                    g,
                    f,
                    name + " runs serially: "
                            + (extent < 2
                                    ? "it has " + extent + " iteration(s)"
                                    : "the target's " + g.cls.vectorBits + "-bit vectors hold one " + check.maxBits
                                            + "-bit lane"));
            return;
        }
        DType maskType = check.maxBits == 64 ? DType.FLOAT64 : DType.FLOAT32;
        JType vt = JType.of(f.var().dtype());
        int mark = g.mark();
        MethodGen.Local lo = new MethodGen.Local(vt, g.newLocal(vt));
        MethodGen.Local base = new MethodGen.Local(vt, g.newLocal(vt));
        VectorGen vg = new VectorGen(g, f.var(), w, maskType, base);
        MethodVisitor mv = g.mv;
        ScalarGen.emit(g, f.min());
        g.store(lo);
        long full = extent - extent % w, rem = extent % w;
        MethodGen.Local prev = g.bind(f.var(), base);
        if (full > 0 && Promotion.unrolls(g, f)) {
            // chunks unrolled: each reads and writes its own promoted locals
            for (long c = 0; c < full / w; c++) {
                g.load(lo);
                g.intConst(vt, c * w);
                mv.visitInsn(vt == JType.LONG ? LADD : IADD);
                g.store(base);
                vg.chunk = (int) c;
                vg.chunkStart = f.min().add(c * w);
                vg.stmt(f.body());
            }
            vg.chunk = -1;
        } else if (full == w) {
            g.load(lo);
            g.store(base);
            vg.stmt(f.body());
        } else if (full > 0) {
            MethodGen.Local k = new MethodGen.Local(vt, g.newLocal(vt));
            g.intConst(vt, 0);
            g.store(k);
            Label top = new Label(), cond = new Label();
            mv.visitJumpInsn(GOTO, cond);
            mv.visitLabel(top);
            g.load(lo);
            g.load(k);
            mv.visitInsn(vt == JType.LONG ? LADD : IADD);
            g.store(base);
            vg.stmt(f.body());
            g.load(k);
            g.intConst(vt, w);
            mv.visitInsn(vt == JType.LONG ? LADD : IADD);
            g.store(k);
            mv.visitLabel(cond);
            g.load(k);
            g.intConst(vt, full);
            if (vt == JType.LONG) {
                mv.visitInsn(LCMP);
                mv.visitJumpInsn(IFLT, top);
            } else {
                mv.visitJumpInsn(IF_ICMPLT, top);
            }
        }
        if (rem > 0) {
            g.load(lo);
            g.intConst(vt, full);
            mv.visitInsn(vt == JType.LONG ? LADD : IADD);
            g.store(base);
            int m = g.newRefLocal();
            vg.species(maskType);
            mv.visitInsn(LCONST_0);
            g.lconst(rem);
            mv.visitMethodInsn(INVOKEINTERFACE, V + "VectorSpecies", "indexInRange", "(JJ)" + MASK_D, true);
            mv.visitVarInsn(ASTORE, m);
            vg.mask = m;
            vg.stmt(f.body());
        }
        g.unbind(f.var(), prev);
        g.release(mark);
    }

    /** The lanes per chunk of a loop of {@code extent} whose widest lane type has {@code maxBits} bits. */
    private static int width(int vectorBits, int maxBits, long extent) {
        int w = vectorBits / maxBits;
        return (int) Math.min(w, Math.max(2, Long.highestOneBit(Math.max(1, extent - 1)) << 1));
    }

    /** The lanes per chunk {@link #loop} gives vectorized loop {@code f}, or -1 if it runs serially. */
    static int lanes(MethodGen g, For f) {
        if (!g.cls.vectorApi || !(f.extent() instanceof IntImm e) || e.value() < 2) return -1;
        VectorCheck check = VectorCheck.of(f);
        if (check.reason != null) return -1;
        int w = width(g.cls.vectorBits, check.maxBits, e.value());
        return w < 2 ? -1 : w;
    }

    private static void serial(MethodGen g, For f, String why) {
        g.cls.note(why);
        StmtEmitter.serial(g, f, () -> StmtEmitter.emit(g, f.body()));
    }

    // ---- statements ----------------------------------------------------------------------------------

    private void stmt(Stmt s) {
        switch (s) {
            case For f -> {
                switch (f.kind()) {
                    case UNROLLED -> StmtEmitter.unrolled(g, f, () -> stmt(f.body()));
                    default -> StmtEmitter.serial(g, f, () -> stmt(f.body())); // inner loops run over all lanes
                }
            }
            case Store st -> store(st);
            case Allocate a -> throw new IllegalStateException("allocation in a vectorized loop");
            case Seq q -> q.stmts().forEach(this::stmt);
            case IfThenElse i -> ifThenElse(i);
            case Let l -> let(l);
            case Evaluate e -> {
                if (varies(e.value())) {
                    value(e.value());
                    mv.visitInsn(POP);
                } else {
                    ScalarGen.emit(g, e.value());
                    mv.visitInsn(JType.of(e.value().dtype()).pop());
                }
            }
            case Pragma p -> stmt(p.body());
            case Barrier b -> {}
        }
    }

    private void ifThenElse(IfThenElse i) {
        if (!varies(i.cond())) {
            Label no = new Label(), end = new Label();
            ScalarGen.emit(g, i.cond());
            mv.visitJumpInsn(IFEQ, no);
            stmt(i.then());
            mv.visitJumpInsn(GOTO, end);
            mv.visitLabel(no);
            if (i.otherwise() != null) stmt(i.otherwise());
            mv.visitLabel(end);
            return;
        }
        int mark = g.mark();
        int c = g.newRefLocal();
        castMask(maskOf(i.cond()), maskType);
        mv.visitVarInsn(ASTORE, c);
        int saved = mask;
        mask = narrowed(c, false);
        ifAnyLane(() -> stmt(i.then()));
        if (i.otherwise() != null) {
            mask = saved;
            mask = narrowed(c, true);
            ifAnyLane(() -> stmt(i.otherwise()));
        }
        mask = saved;
        g.release(mark);
    }

    private void let(Let l) {
        if (!varies(l.value())) {
            int mark = g.mark();
            JType t = JType.of(l.var().dtype());
            MethodGen.Local loc = new MethodGen.Local(t, g.newLocal(t));
            ScalarGen.emit(g, l.value());
            g.store(loc);
            MethodGen.Local prev = g.bind(l.var(), loc);
            stmt(l.body());
            g.unbind(l.var(), prev);
            g.release(mark);
            return;
        }
        int mark = g.mark();
        int slot = g.newRefLocal();
        if (l.value().dtype() == DType.BOOL) {
            castMask(maskOf(l.value()), maskType);
            maskTypes.put(l.var(), maskType);
        } else {
            vec(l.value());
        }
        mv.visitVarInsn(ASTORE, slot);
        varying.add(l.var());
        letSlots.put(l.var(), slot);
        letDefs.put(l.var(), Exprs.substitute(l.value(), letDefs));
        stmt(l.body());
        letSlots.remove(l.var());
        letDefs.remove(l.var());
        maskTypes.remove(l.var());
        varying.remove(l.var());
        g.release(mark);
    }

    private void store(Store st) {
        Buffer b = st.buffer();
        DType t = b.dtype();
        Integer promoted = Promotion.slot(g, st, b, chunk);
        if (promoted != null) {
            vec(st.value());
            mv.visitVarInsn(ASTORE, promoted);
            return;
        }
        MethodGen.BufRef r = g.buffer(b, "stored to");
        List<Expr> idx = lane0(st.indices());
        if (VectorCheck.vectorType(t) && contiguous(b, idx)) {
            vec(st.value());
            mv.visitVarInsn(ALOAD, r.segSlot());
            ScalarGen.address(g, b, idx, r.byteBase());
            mv.visitFieldInsn(GETSTATIC, "java/nio/ByteOrder", ORDER, "Ljava/nio/ByteOrder;");
            if (mask >= 0) {
                loadMask(t);
                mv.visitMethodInsn(
                        INVOKEVIRTUAL,
                        cls(t),
                        "intoMemorySegment",
                        "(L" + ScalarGen.SEGMENT + ";JLjava/nio/ByteOrder;" + MASK_D + ")V",
                        false);
            } else {
                mv.visitMethodInsn(
                        INVOKEVIRTUAL,
                        cls(t),
                        "intoMemorySegment",
                        "(L" + ScalarGen.SEGMENT + ";JLjava/nio/ByteOrder;)V",
                        false);
            }
            return;
        }
        // scatter, lane by lane (in lane order, so the last lane wins where addresses coincide)
        int mark = g.mark();
        boolean vary = varies(st.value());
        int arr = -1;
        MethodGen.Local scalar = null;
        if (vary && t == DType.BOOL) {
            arr = g.newRefLocal();
            maskOf(st.value());
            mv.visitMethodInsn(INVOKEVIRTUAL, MASK, "toArray", "()[Z", false);
            mv.visitVarInsn(ASTORE, arr);
        } else if (vary) {
            arr = g.newRefLocal();
            vec(st.value());
            mv.visitMethodInsn(INVOKEVIRTUAL, cls(t), "toArray", "()[" + JType.of(t).desc, false);
            mv.visitVarInsn(ASTORE, arr);
        } else {
            scalar = new MethodGen.Local(JType.of(t), g.newLocal(JType.of(t)));
            uniform(st.value(), () -> ScalarGen.emit(g, st.value()), () -> zero(JType.of(t)));
            g.store(scalar);
        }
        final int values = arr;
        final MethodGen.Local uniform = scalar;
        perLane((j) -> {
            mv.visitVarInsn(ALOAD, r.segSlot());
            ScalarGen.layout(t).push(mv);
            ScalarGen.address(g, b, idx, r.byteBase());
            if (values >= 0) {
                mv.visitVarInsn(ALOAD, values);
                mv.visitVarInsn(ILOAD, j);
                mv.visitInsn(t == DType.BOOL ? BALOAD : arrayLoad(t));
            } else {
                g.load(uniform);
            }
            ScalarGen.storeTail(g, t);
        });
        g.release(mark);
    }
}
