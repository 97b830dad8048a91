package dev.kiln.jit.jvm;

import static org.objectweb.asm.Opcodes.*;

import dev.kiln.ir.Buffer;
import dev.kiln.ir.BufferLoad;
import dev.kiln.ir.DType;
import dev.kiln.ir.Expr;
import dev.kiln.ir.Exprs;
import dev.kiln.ir.IntImm;
import dev.kiln.ir.Var;
import dev.kiln.tir.For;
import dev.kiln.tir.Stmt;
import dev.kiln.tir.StmtVisitor;
import dev.kiln.tir.Store;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Set;
import org.objectweb.asm.Handle;
import org.objectweb.asm.MethodVisitor;
import org.objectweb.asm.Type;
import org.objectweb.asm.tree.MethodNode;

/**
 * Moves a statement into a static method of its own, passing what it uses from the enclosing
 * method (variables, buffer segments, the scratch segment) as parameters. Parallel loops are
 * outlined as {@code body(captures..., min, lo, hi)} running iterations {@code [lo, hi)}, wrapped
 * into a {@link JvmParallel.Body} by {@code invokedynamic} (LambdaMetafactory) and run by
 * {@link JvmParallel#run}; a parallel loop with little work calls its body directly instead.
 * Large sequences are split the same way, so no method passes HotSpot's JIT size limit.
 */
final class Outliner {
    private Outliner() {}

    /** A parallel loop with fewer estimated operations than this runs on the calling thread. */
    static final long PARALLEL_MIN_OPS = 16384;

    private static final String SEG_DESC = "L" + ScalarGen.SEGMENT + ";";
    private static final String BODY = "dev/kiln/jit/jvm/JvmParallel$Body";

    /** What a statement uses from its enclosing method, in order of first use. */
    record Captures(List<Var> vars, List<Buffer> bufs) {
        String desc(MethodGen g) {
            StringBuilder sb = new StringBuilder();
            for (Var v : vars) sb.append(g.var(v).type().desc);
            for (int i = 0; i < bufs.size(); i++) sb.append(SEG_DESC);
            return sb.toString();
        }

        /** Pushes the captured values in the enclosing method. */
        void push(MethodGen g) {
            for (Var v : vars) g.load(g.var(v));
            for (Buffer b : bufs) g.mv.visitVarInsn(ALOAD, g.buffer(b, "used").segSlot());
        }

        /** Binds the captures to the parameters of {@code child}, from slot 0; returns the next slot. */
        int bind(MethodGen parent, MethodGen child) {
            int slot = 0;
            for (Var v : vars) {
                JType t = parent.var(v).type();
                child.vars.put(v, new MethodGen.Local(t, slot));
                slot += t.size;
            }
            for (Buffer b : bufs) {
                child.bufs.put(b, new MethodGen.BufRef(slot, parent.bufs.get(b).byteBase()));
                slot++;
            }
            return slot;
        }

        int slots(MethodGen g) {
            int n = bufs.size();
            for (Var v : vars) n += g.var(v).type().size;
            return n;
        }
    }

    static Captures captures(MethodGen g, Stmt s) {
        Set<Var> vars = Collections.newSetFromMap(new IdentityHashMap<>());
        Set<Buffer> bufs = Collections.newSetFromMap(new IdentityHashMap<>());
        List<Var> varList = new ArrayList<>();
        List<Buffer> bufList = new ArrayList<>();
        java.util.function.Consumer<Expr> scan = e -> Exprs.forEach(e, x -> {
            if (x instanceof Var v && g.vars.containsKey(v) && vars.add(v)) varList.add(v);
            if (x instanceof BufferLoad l
                    && g.bufs.containsKey(l.buffer().base())
                    && bufs.add(l.buffer().base())) {
                bufList.add(l.buffer().base());
            }
        });
        new StmtVisitor() {
            @Override
            public void visit(Stmt st) {
                if (st instanceof Store w
                        && g.bufs.containsKey(w.buffer().base())
                        && bufs.add(w.buffer().base())) {
                    bufList.add(w.buffer().base());
                }
                visitChildren(st);
            }

            @Override
            public void visitExpr(Expr e) {
                scan.accept(e);
            }
        }.visit(s);
        return new Captures(varList, bufList);
    }

    /** Outlines {@code s} into a method of the same scratch context and calls it. */
    static void callSerial(MethodGen g, Stmt s) {
        callSerial(g, s, null);
    }

    /** {@link #callSerial(MethodGen, Stmt)}, with {@code tileLoop} (s itself, or null) marked as the method's own. */
    static void callSerial(MethodGen g, Stmt s, For tileLoop) {
        Captures c = captures(g, s);
        String desc = "(" + c.desc(g) + SEG_DESC + ")V";
        String name = g.cls.newMethodName("part");
        MethodNode mn = new MethodNode(ACC_PRIVATE | ACC_STATIC | ACC_SYNTHETIC, name, desc, null, null);
        int scratchParam = c.slots(g);
        MethodGen child = new MethodGen(g.cls, mn, scratchParam + 1, g.scratch, scratchParam, g.inParallel);
        c.bind(g, child);
        child.tileLoop = tileLoop;
        StmtEmitter.emit(child, s);
        mn.visitInsn(RETURN);
        g.cls.addMethod(child, false);
        c.push(g);
        g.mv.visitVarInsn(ALOAD, g.scratchSlot);
        g.invokeStatic(g.cls.className, name, desc);
    }

    /** A parallel loop: its body outlined, run on the pool (or directly when the work is small). */
    static void parallel(MethodGen g, For f) {
        MethodVisitor mv = g.mv;
        DType t = f.var().dtype();
        JType j = JType.of(t);
        Captures c = captures(g, f.body());
        String capDesc = c.desc(g) + j.desc;
        String desc = "(" + capDesc + "JJ)V";
        String name = g.cls.newMethodName("parallel_" + f.var().name().replaceAll("[^A-Za-z0-9_]", "_"));

        // the body: for k in [lo, hi): v = min + k
        MethodNode mn = new MethodNode(ACC_PRIVATE | ACC_STATIC | ACC_SYNTHETIC, name, desc, null, null);
        int minSlot = c.slots(g);
        int loSlot = minSlot + j.size, hiSlot = loSlot + 2;
        MethodGen child = new MethodGen(g.cls, mn, hiSlot + 2, new MethodGen.ScratchContext(1), -1, true);
        c.bind(g, child);
        emitBody(child, f, new MethodGen.Local(j, minSlot), loSlot, hiSlot);
        mn.visitInsn(RETURN);
        g.cls.addMethod(child, true);

        // the call
        int mark = g.mark();
        MethodGen.Local min = new MethodGen.Local(j, g.newLocal(j));
        MethodGen.Local n = new MethodGen.Local(JType.LONG, g.newLocal(JType.LONG));
        ScalarGen.emit(g, f.min());
        g.store(min);
        ScalarGen.emit(g, f.extent());
        if (j == JType.INT) mv.visitInsn(I2L);
        g.store(n);
        long ops = Work.mul(Work.trips(f), Math.max(1, Work.ops(f.body())));
        if (f.extent() instanceof IntImm && ops < PARALLEL_MIN_OPS) {
            g.cls.note("parallel loop '" + f.var().name() + "' runs on the calling thread: about " + ops
                    + " operations, below " + PARALLEL_MIN_OPS);
            c.push(g);
            g.load(min);
            mv.visitInsn(LCONST_0);
            g.load(n);
            g.invokeStatic(g.cls.className, name, desc);
        } else {
            c.push(g);
            g.load(min);
            Handle metafactory = new Handle(
                    H_INVOKESTATIC,
                    "java/lang/invoke/LambdaMetafactory",
                    "metafactory",
                    "(Ljava/lang/invoke/MethodHandles$Lookup;Ljava/lang/String;Ljava/lang/invoke/MethodType;"
                            + "Ljava/lang/invoke/MethodType;Ljava/lang/invoke/MethodHandle;"
                            + "Ljava/lang/invoke/MethodType;)"
                            + "Ljava/lang/invoke/CallSite;",
                    false);
            mv.visitInvokeDynamicInsn(
                    "run",
                    "(" + capDesc + ")L" + BODY + ";",
                    metafactory,
                    Type.getType("(JJ)V"),
                    new Handle(H_INVOKESTATIC, g.cls.className, name, desc, false),
                    Type.getType("(JJ)V"));
            g.load(n);
            g.iconst(g.cls.threads);
            g.invokeStatic(JvmParallel.runtime(), "run", "(L" + BODY + ";JI)V");
        }
        g.release(mark);
    }

    private static void emitBody(MethodGen g, For f, MethodGen.Local min, int loSlot, int hiSlot) {
        MethodVisitor mv = g.mv;
        DType t = f.var().dtype();
        JType j = JType.of(t);
        MethodGen.Local k = new MethodGen.Local(JType.LONG, loSlot);
        MethodGen.Local hi = new MethodGen.Local(JType.LONG, hiSlot);
        MethodGen.Local v = new MethodGen.Local(j, g.newLocal(j));
        org.objectweb.asm.Label top = new org.objectweb.asm.Label(), cond = new org.objectweb.asm.Label();
        mv.visitJumpInsn(GOTO, cond);
        mv.visitLabel(top);
        g.load(min);
        g.load(k);
        if (j == JType.INT) mv.visitInsn(L2I);
        mv.visitInsn(j == JType.LONG ? LADD : IADD);
        if (j == JType.INT) ScalarGen.wrapInt(g, t);
        g.store(v);
        g.vars.put(f.var(), v);
        StmtEmitter.emit(g, f.body());
        g.vars.remove(f.var());
        g.load(k);
        mv.visitInsn(LCONST_1);
        mv.visitInsn(LADD);
        g.store(k);
        mv.visitLabel(cond);
        g.load(k);
        g.load(hi);
        mv.visitInsn(LCMP);
        mv.visitJumpInsn(IFLT, top);
    }
}
