package dev.kiln.jit.jvm;

import static org.objectweb.asm.Opcodes.*;

import dev.kiln.ir.Buffer;
import dev.kiln.ir.DType;
import dev.kiln.ir.IntImm;
import dev.kiln.ir.KilnException;
import dev.kiln.tir.Allocate;
import dev.kiln.tir.Barrier;
import dev.kiln.tir.Evaluate;
import dev.kiln.tir.For;
import dev.kiln.tir.ForKind;
import dev.kiln.tir.IfThenElse;
import dev.kiln.tir.Let;
import dev.kiln.tir.Pragma;
import dev.kiln.tir.Seq;
import dev.kiln.tir.Stmt;
import dev.kiln.tir.Store;
import org.objectweb.asm.Label;
import org.objectweb.asm.MethodVisitor;

/**
 * Statements to bytecode. Serial loops are counted loops on a local; unrolled loops are emitted
 * once per iteration (within {@link #UNROLL_BUDGET}); vectorized loops go to {@link VectorGen} and
 * parallel loops to {@link Outliner}; a sequence too large for one JIT-compilable method has its
 * larger members outlined into methods of their own.
 */
final class StmtEmitter {
    private StmtEmitter() {}

    /** Unrolling is refused (the loop stays a loop, with a note) above this many estimated bytes. */
    static final long UNROLL_BUDGET = 3000;
    /** A sequence estimated above this many bytes has its larger members outlined. */
    static final long SPLIT_BYTES = 3500;
    /**
     * A sequence of vectorized leaf loops (a register tile's rows and chunks: the hot body of a reduction) is
     * split only above this many estimated bytes: outlining its members would put calls, which spill every
     * vector register, into the hottest loop. The estimate counts a masked tail for every vectorized loop and
     * 7 bytes per expression node: a tuned GEMM's 8 x 2-vector tile body was estimated at 7184 bytes and
     * generated as 8 methods of 216-222 bytes, so such a body stays far under HotSpot's 8000-byte limit;
     * when the code around it is too large, the loop nest around it is outlined instead.
     */
    static final long LEAF_SPLIT_BYTES = 14000;
    /** Members of a split sequence estimated above this many bytes are outlined. */
    static final long OUTLINE_MEMBER_BYTES = 200;

    /** Whether sequence {@code q} is split, its larger members outlined into methods of their own. */
    static boolean splits(Seq q) {
        if (q.stmts().size() < 2) return false;
        long bytes = Work.bytes(q);
        return bytes > (vectorLeaves(q) ? LEAF_SPLIT_BYTES : SPLIT_BYTES);
    }

    /** Whether every member of {@code q} is a vectorized loop of stores only (no loop inside). */
    private static boolean vectorLeaves(Seq q) {
        for (Stmt c : q.stmts()) {
            if (!(c instanceof For f) || f.kind() != ForKind.VECTORIZED || !Promotion.storesOnly(f.body())) {
                return false;
            }
        }
        return true;
    }

    static void emit(MethodGen g, Stmt s) {
        MethodVisitor mv = g.mv;
        switch (s) {
            case For f -> loop(g, f);
            case Store st -> {
                MethodGen.BufRef r = g.buffer(st.buffer(), "stored to");
                mv.visitVarInsn(ALOAD, r.segSlot());
                ScalarGen.layout(st.buffer().dtype()).push(mv);
                ScalarGen.address(g, st.buffer(), st.indices(), r.byteBase());
                ScalarGen.emit(g, st.value());
                ScalarGen.storeTail(g, st.buffer().dtype());
            }
            case Allocate a -> allocate(g, a);
            case Seq q -> {
                boolean split = splits(q);
                for (Stmt c : q.stmts()) {
                    if (split && Work.bytes(c) > OUTLINE_MEMBER_BYTES) Outliner.callSerial(g, c);
                    else emit(g, c);
                }
            }
            case IfThenElse i -> {
                Label no = new Label(), end = new Label();
                ScalarGen.emit(g, i.cond());
                mv.visitJumpInsn(IFEQ, no);
                emit(g, i.then());
                if (i.otherwise() != null) mv.visitJumpInsn(GOTO, end);
                mv.visitLabel(no);
                if (i.otherwise() != null) {
                    emit(g, i.otherwise());
                    mv.visitLabel(end);
                }
            }
            case Let l -> {
                int mark = g.mark();
                MethodGen.Local loc = new MethodGen.Local(
                        JType.of(l.var().dtype()), g.newLocal(JType.of(l.var().dtype())));
                ScalarGen.emit(g, l.value());
                g.store(loc);
                MethodGen.Local prev = g.bind(l.var(), loc);
                emit(g, l.body());
                g.unbind(l.var(), prev);
                g.release(mark);
            }
            case Evaluate e -> {
                ScalarGen.emit(g, e.value());
                mv.visitInsn(JType.of(e.value().dtype()).pop());
            }
            case Pragma p -> {
                if (p.tensorIntrinsic() != null) {
                    throw new dev.kiln.ir.KilnException("the JVM backend has no tensor intrinsics; '"
                            + p.tensorIntrinsic() + "' is tensorized (compile with the LLVM backend, or run the "
                            + "pattern with the interpreter)");
                }
                emit(g, p.body()); // hints for the lowering passes; the body runs as written
            }
            case Barrier b -> {
                // synchronises GPU threads; the JVM target has no thread-bound loops (they are rejected)
            }
        }
    }

    private static void loop(MethodGen g, For f) {
        switch (f.kind()) {
            case SERIAL -> Promotion.serialLoop(g, f);
            case UNROLLED -> unrolled(g, f, () -> emit(g, f.body()));
            case VECTORIZED -> VectorGen.loop(g, f);
            case PARALLEL -> {
                if (g.inParallel) {
                    g.cls.note("parallel loop '" + f.var().name() + "' is nested in another parallel loop and runs "
                            + "serially inside it");
                    serial(g, f, () -> emit(g, f.body()));
                } else {
                    Outliner.parallel(g, f);
                }
            }
            case THREAD_BOUND ->
                throw new KilnException("function '" + g.cls.func.name() + "': loop '"
                        + f.var().name()
                        + "' is bound to " + f.thread().tag() + ", but the JVM target runs CPU code; bind loops to "
                        + "GPU threads only for CUDA targets");
        }
    }

    /**
     * {@code for v in [min, min + extent): body}, with min and extent evaluated once. int32 and int64
     * variables count themselves; narrower ones are {@code wrap(min + k)} of a counter {@code k}.
     */
    static void serial(MethodGen g, For f, Runnable body) {
        MethodVisitor mv = g.mv;
        DType t = f.var().dtype();
        JType j = JType.of(t);
        int mark = g.mark();
        MethodGen.Local v = new MethodGen.Local(j, g.newLocal(j));
        MethodGen.Local end = new MethodGen.Local(j, g.newLocal(j));
        boolean narrow = t != DType.INT32 && t != DType.INT64;
        MethodGen.Local lo = narrow ? new MethodGen.Local(j, g.newLocal(j)) : null;
        MethodGen.Local k = narrow ? new MethodGen.Local(j, g.newLocal(j)) : null;
        MethodGen.Local counter = narrow ? k : v;
        ScalarGen.emit(g, f.min());
        if (narrow) {
            g.store(lo);
            g.iconst(0);
            g.store(k);
            ScalarGen.emit(g, f.extent());
        } else {
            mv.visitInsn(j == JType.LONG ? DUP2 : DUP);
            g.store(v);
            ScalarGen.emit(g, f.extent());
            mv.visitInsn(j == JType.LONG ? LADD : IADD);
        }
        g.store(end);
        Label top = new Label(), cond = new Label();
        mv.visitJumpInsn(GOTO, cond);
        mv.visitLabel(top);
        if (narrow) {
            g.load(lo);
            g.load(k);
            mv.visitInsn(IADD);
            ScalarGen.wrapInt(g, t);
            g.store(v);
        }
        MethodGen.Local prev = g.bind(f.var(), v);
        body.run();
        g.unbind(f.var(), prev);
        if (j == JType.LONG) {
            g.load(counter);
            mv.visitInsn(LCONST_1);
            mv.visitInsn(LADD);
            g.store(counter);
        } else {
            mv.visitIincInsn(counter.slot(), 1);
        }
        mv.visitLabel(cond);
        g.load(counter);
        g.load(end);
        if (j == JType.LONG) {
            mv.visitInsn(LCMP);
            mv.visitJumpInsn(IFLT, top);
        } else {
            mv.visitJumpInsn(IF_ICMPLT, top);
        }
        g.release(mark);
    }

    /** Emits the body once per iteration when the extent is constant and the result small enough. */
    static void unrolled(MethodGen g, For f, Runnable body) {
        if (!(f.extent() instanceof IntImm e)) {
            g.cls.note("unrolled loop '" + f.var().name() + "' has a non-constant extent and stays a loop");
            serial(g, f, body);
            return;
        }
        long size = Work.mul(e.value(), Work.bytes(f.body()));
        if (size > UNROLL_BUDGET) {
            g.cls.note("unrolled loop '" + f.var().name() + "' stays a loop: unrolling " + e.value()
                    + " iterations would make about " + size + " bytes of bytecode (budget " + UNROLL_BUDGET + ")");
            serial(g, f, body);
            return;
        }
        MethodVisitor mv = g.mv;
        DType t = f.var().dtype();
        JType j = JType.of(t);
        int mark = g.mark();
        MethodGen.Local lo = new MethodGen.Local(j, g.newLocal(j));
        MethodGen.Local v = new MethodGen.Local(j, g.newLocal(j));
        ScalarGen.emit(g, f.min());
        g.store(lo);
        MethodGen.Local prev = g.bind(f.var(), v);
        for (long k = 0; k < e.value(); k++) {
            g.load(lo);
            g.intConst(j, k);
            mv.visitInsn(j == JType.LONG ? LADD : IADD);
            if (j == JType.INT) ScalarGen.wrapInt(g, t);
            g.store(v);
            body.run();
        }
        g.unbind(f.var(), prev);
        g.release(mark);
    }

    private static void allocate(MethodGen g, Allocate a) {
        Buffer b = a.buffer();
        long bytes;
        try {
            long[] sh = b.constShape(), st = b.constStrides();
            long last = 0;
            for (int d = 0; d < sh.length; d++) last = Math.addExact(last, Math.multiplyExact(sh[d] - 1, st[d]));
            bytes = Math.multiplyExact(last + 1, (long) b.dtype().bytes());
        } catch (KilnException e) {
            throw new KilnException(
                    "function '" + g.cls.func.name() + "': allocated " + e.getMessage()
                            + "; the JVM backend needs constant shapes and strides",
                    e);
        }
        long off = g.scratch.reserve(bytes);
        MethodVisitor mv = g.mv;
        if (!FullWrite.writesAllFirst(a, bytes / b.dtype().bytes())) {
            mv.visitVarInsn(ALOAD, g.scratchSlot);
            g.lconst(off);
            g.lconst(bytes);
            g.invokeStatic(ScalarGen.OPS, "zero", "(L" + ScalarGen.SEGMENT + ";JJ)V");
        }
        MethodGen.BufRef prev = g.bufs.put(b.base(), new MethodGen.BufRef(g.scratchSlot, off));
        emit(g, a.body());
        if (prev == null) g.bufs.remove(b.base());
        else g.bufs.put(b.base(), prev);
    }
}
