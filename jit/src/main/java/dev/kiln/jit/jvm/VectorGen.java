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
import dev.kiln.ir.DType;
import dev.kiln.ir.Expr;
import dev.kiln.ir.ExprPrinter;
import dev.kiln.ir.Exprs;
import dev.kiln.ir.IntImm;
import dev.kiln.ir.Intrinsic;
import dev.kiln.ir.KilnException;
import dev.kiln.ir.Not;
import dev.kiln.ir.Or;
import dev.kiln.ir.Select;
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
import java.nio.ByteOrder;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
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
final class VectorGen {
    private static final String V = "jdk/incubator/vector/";
    private static final String SPECIES = "L" + V + "VectorSpecies;";
    private static final String MASK = V + "VectorMask";
    private static final String MASK_D = "L" + MASK + ";";
    private static final String VEC_D = "L" + V + "Vector;";
    private static final String ORDER = ByteOrder.nativeOrder() == ByteOrder.LITTLE_ENDIAN ? "LITTLE_ENDIAN" : "BIG_ENDIAN";

    private final MethodGen g;
    private final MethodVisitor mv;
    private final Var var;
    private final int lanes;
    /** The element type of the current mask (every mask is kept in this species). */
    private final DType maskType;
    private final MethodGen.Local base;
    private final Set<Var> varying = Collections.newSetFromMap(new IdentityHashMap<>());
    /** Varying let variables: the local holding the vector (or mask), and the definition, lets substituted. */
    private final Map<Var, Integer> letSlots = new IdentityHashMap<>();
    private final Map<Var, Expr> letDefs = new IdentityHashMap<>();
    /** The local holding the current mask (in {@link #maskType}'s species), or -1: all lanes. */
    private int mask = -1;

    private VectorGen(MethodGen g, Var var, int lanes, DType maskType, MethodGen.Local base) {
        this.g = g;
        this.mv = g.mv;
        this.var = var;
        this.lanes = lanes;
        this.maskType = maskType;
        this.base = base;
        varying.add(var);
    }

    // ---- the loop ------------------------------------------------------------------------------------

    static void loop(MethodGen g, For f) {
        String name = "vectorized loop '" + f.var().name() + "' of function '" + g.cls.func.name() + "'";
        if (!g.cls.vectorApi) {
            serial(g, f, name + " runs serially: the Vector API is not available (run the JVM with "
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
        int w = g.cls.vectorBits / check.maxBits;
        w = (int) Math.min(w, Math.max(2, Long.highestOneBit(Math.max(1, extent - 1)) << 1));
        if (w < 2 || extent < 2) {
            serial(g, f, name + " runs serially: " + (extent < 2 ? "it has " + extent + " iteration(s)"
                    : "the target's " + g.cls.vectorBits + "-bit vectors hold one " + check.maxBits + "-bit lane"));
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
        if (full == w) {
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
            case Barrier b -> { }
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

    /**
     * Runs {@code body} only if the current mask has a lane set. Serially, a branch no lane takes
     * never runs, and the uniform parts of it (computed once for all lanes) may only be valid where
     * some lane takes it: a load guarded by a condition on an outer loop, for example.
     */
    private void ifAnyLane(Runnable body) {
        Label skip = new Label();
        mv.visitVarInsn(ALOAD, mask);
        mv.visitMethodInsn(INVOKEVIRTUAL, MASK, "anyTrue", "()Z", false);
        mv.visitJumpInsn(IFEQ, skip);
        body.run();
        mv.visitLabel(skip);
    }

    private void zero(JType t) {
        mv.visitInsn(switch (t) {
            case INT -> ICONST_0;
            case LONG -> LCONST_0;
            case FLOAT -> FCONST_0;
            case DOUBLE -> DCONST_0;
        });
    }

    /** Whether computing {@code e} can fail (a load out of bounds, a division by zero) where no lane needs it. */
    private static boolean mayFail(Expr e) {
        boolean[] hit = {false};
        Exprs.forEach(e, x -> {
            if (x instanceof BufferLoad || x instanceof Binary b && b.op().integerOnly()) hit[0] = true;
        });
        return hit[0];
    }

    /**
     * Pushes uniform {@code e} with {@code push} (which leaves one value), or {@code zero} when a
     * mask is active with no lane set and computing {@code e} could fail.
     */
    private void uniform(Expr e, Runnable push, Runnable zero) {
        if (mask < 0 || !mayFail(e)) {
            push.run();
            return;
        }
        Label none = new Label(), end = new Label();
        mv.visitVarInsn(ALOAD, mask);
        mv.visitMethodInsn(INVOKEVIRTUAL, MASK, "anyTrue", "()Z", false);
        mv.visitJumpInsn(IFEQ, none);
        push.run();
        mv.visitJumpInsn(GOTO, end);
        mv.visitLabel(none);
        zero.run();
        mv.visitLabel(end);
    }

    /** A new local holding the current mask and (not) the mask in {@code slot}. */
    private int narrowed(int slot, boolean negate) {
        int m = g.newRefLocal();
        if (mask < 0) {
            mv.visitVarInsn(ALOAD, slot);
            if (negate) mv.visitMethodInsn(INVOKEVIRTUAL, MASK, "not", "()" + MASK_D, false);
        } else {
            mv.visitVarInsn(ALOAD, mask);
            mv.visitVarInsn(ALOAD, slot);
            mv.visitMethodInsn(INVOKEVIRTUAL, MASK, negate ? "andNot" : "and", "(" + MASK_D + ")" + MASK_D, false);
        }
        mv.visitVarInsn(ASTORE, m);
        return m;
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
        MethodGen.BufRef r = g.buffer(b, "stored to");
        List<Expr> idx = lane0(st.indices());
        if (VectorCheck.vectorType(t) && contiguous(b, idx)) {
            vec(st.value());
            mv.visitVarInsn(ALOAD, r.segSlot());
            ScalarGen.address(g, b, idx, r.byteBase());
            mv.visitFieldInsn(GETSTATIC, "java/nio/ByteOrder", ORDER, "Ljava/nio/ByteOrder;");
            if (mask >= 0) {
                loadMask(t);
                mv.visitMethodInsn(INVOKEVIRTUAL, cls(t), "intoMemorySegment",
                        "(L" + ScalarGen.SEGMENT + ";JLjava/nio/ByteOrder;" + MASK_D + ")V", false);
            } else {
                mv.visitMethodInsn(INVOKEVIRTUAL, cls(t), "intoMemorySegment",
                        "(L" + ScalarGen.SEGMENT + ";JLjava/nio/ByteOrder;)V", false);
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

    // ---- values --------------------------------------------------------------------------------------

    private boolean varies(Expr e) {
        boolean[] hit = {false};
        Exprs.forEach(e, x -> { if (x instanceof Var v && varying.contains(v)) hit[0] = true; });
        return hit[0];
    }

    /** Pushes a vector or, for bool, a mask (in its own species). */
    private void value(Expr e) {
        if (e.dtype() == DType.BOOL) maskOf(e);
        else vec(e);
    }

    /** Pushes {@code e} (of a vector type) as a vector of W lanes. */
    private void vec(Expr e) {
        DType t = e.dtype();
        if (!varies(e)) {
            species(t);
            uniform(e, () -> ScalarGen.emit(g, e), () -> zero(JType.of(t)));
            mv.visitMethodInsn(INVOKESTATIC, cls(t), "broadcast", "(" + SPECIES + JType.of(t).desc + ")" + desc(t), false);
            return;
        }
        switch (e) {
            case Var x -> {
                if (x == var) {
                    species(t);
                    g.load(base);
                    mv.visitMethodInsn(INVOKESTATIC, cls(t), "broadcast", "(" + SPECIES + JType.of(t).desc + ")" + desc(t), false);
                    mv.visitInsn(ICONST_1);
                    mv.visitMethodInsn(INVOKEVIRTUAL, cls(t), "addIndex", "(I)" + desc(t), false);
                } else {
                    mv.visitVarInsn(ALOAD, letSlots.get(x));
                }
            }
            case Binary b -> binary(b);
            case Select s -> select(s);
            case Cast c -> cast(c);
            case Call c -> call(c);
            case BufferLoad l -> load(l);
            default -> throw new IllegalStateException("not a vector value: " + ExprPrinter.print(e));
        }
    }

    private void binary(Binary b) {
        DType t = b.dtype();
        String name = switch (b.op()) {
            case ADD -> "add";
            case SUB -> "sub";
            case MUL -> "mul";
            case DIV -> "div";
            case MIN -> "min";
            case MAX -> "max";
            case FLOORDIV, FLOORMOD, TRUNCDIV, TRUNCMOD -> null;
        };
        if (name == null) {
            perLaneOp(t, List.of(b.a(), b.b()), false, () -> ScalarGen.binaryOp(g, b.op(), t, b));
            return;
        }
        vec(b.a());
        vec(b.b());
        mv.visitMethodInsn(INVOKEVIRTUAL, cls(t), name, "(" + VEC_D + ")" + desc(t), false);
    }

    private void select(Select s) {
        DType t = s.dtype();
        if (!varies(s.cond())) {
            Label no = new Label(), end = new Label();
            ScalarGen.emit(g, s.cond());
            mv.visitJumpInsn(IFEQ, no);
            vec(s.t());
            mv.visitJumpInsn(GOTO, end);
            mv.visitLabel(no);
            vec(s.f());
            mv.visitLabel(end);
            return;
        }
        int mark = g.mark();
        int c = g.newRefLocal();
        castMask(maskOf(s.cond()), maskType);
        mv.visitVarInsn(ASTORE, c);
        int saved = mask;
        mask = narrowed(c, true);
        vec(s.f());
        mask = saved;
        mask = narrowed(c, false);
        vec(s.t());
        mask = saved;
        mv.visitVarInsn(ALOAD, c);
        castMask(maskType, t);
        mv.visitMethodInsn(INVOKEVIRTUAL, cls(t), "blend", "(" + VEC_D + MASK_D + ")" + desc(t), false);
        g.release(mark);
    }

    private void cast(Cast c) {
        DType to = c.dtype(), from = c.value().dtype();
        if (from == DType.BOOL) {
            species(to);
            mv.visitMethodInsn(INVOKESTATIC, cls(to), "zero", "(" + SPECIES + ")" + desc(to), false);
            mv.visitInsn(LCONST_1);
            castMask(maskOf(c.value()), to);
            mv.visitMethodInsn(INVOKEVIRTUAL, cls(to), "blend", "(J" + MASK_D + ")" + desc(to), false);
            return;
        }
        if (!VectorCheck.vectorType(from)) {
            perLaneScalar(c);
            return;
        }
        vec(c.value());
        if (from == to) return;
        mv.visitFieldInsn(GETSTATIC, V + "VectorOperators", letter(from) + "2" + letter(to), "L" + V + "VectorOperators$Conversion;");
        species(to);
        mv.visitInsn(ICONST_0);
        mv.visitMethodInsn(INVOKEVIRTUAL, V + "Vector", "convertShape",
                "(L" + V + "VectorOperators$Conversion;" + SPECIES + "I)" + VEC_D, false);
        mv.visitTypeInsn(CHECKCAST, cls(to));
    }

    private void call(Call c) {
        DType t = c.dtype();
        switch (c.fn()) {
            case FMA -> {
                vec(c.args().get(0));
                vec(c.args().get(1));
                vec(c.args().get(2));
                mv.visitMethodInsn(INVOKEVIRTUAL, cls(t), "fma", "(" + VEC_D + VEC_D + ")" + desc(t), false);
            }
            case SQRT -> {
                vec(c.args().get(0));
                mv.visitMethodInsn(INVOKEVIRTUAL, cls(t), "sqrt", "()" + desc(t), false);
            }
            case ABS -> {
                vec(c.args().get(0));
                mv.visitMethodInsn(INVOKEVIRTUAL, cls(t), "abs", "()" + desc(t), false);
            }
            default -> {
                boolean f32 = t == DType.FLOAT32;
                perLaneOp(t, c.args(), f32, () -> ScalarGen.intrinsic(g, c.fn(), t, f32));
            }
        }
    }

    private void load(BufferLoad l) {
        Buffer b = l.buffer();
        DType t = b.dtype();
        MethodGen.BufRef r = g.buffer(b, "loaded from");
        List<Expr> idx = lane0(l.indices());
        if (contiguous(b, idx)) {
            species(t);
            mv.visitVarInsn(ALOAD, r.segSlot());
            ScalarGen.address(g, b, idx, r.byteBase());
            mv.visitFieldInsn(GETSTATIC, "java/nio/ByteOrder", ORDER, "Ljava/nio/ByteOrder;");
            if (mask >= 0) {
                loadMask(t);
                mv.visitMethodInsn(INVOKESTATIC, cls(t), "fromMemorySegment",
                        "(" + SPECIES + "L" + ScalarGen.SEGMENT + ";JLjava/nio/ByteOrder;" + MASK_D + ")" + desc(t), false);
            } else {
                mv.visitMethodInsn(INVOKESTATIC, cls(t), "fromMemorySegment",
                        "(" + SPECIES + "L" + ScalarGen.SEGMENT + ";JLjava/nio/ByteOrder;)" + desc(t), false);
            }
            return;
        }
        // gather, lane by lane
        int mark = g.mark();
        int res = newArray(t);
        perLane((j) -> {
            mv.visitVarInsn(ALOAD, res);
            mv.visitVarInsn(ILOAD, j);
            ScalarGen.load(g, b, idx);
            mv.visitInsn(arrayStore(t));
        });
        fromArray(t, res);
        g.release(mark);
    }

    /** Pushes the mask of bool expression {@code e}; returns the element type of its species. */
    private DType maskOf(Expr e) {
        if (!varies(e)) {
            species(maskType);
            uniform(e, () -> ScalarGen.emit(g, e), () -> zero(JType.INT));
            mv.visitMethodInsn(INVOKEINTERFACE, V + "VectorSpecies", "maskAll", "(Z)" + MASK_D, true);
            return maskType;
        }
        switch (e) {
            case Compare c -> {
                DType t = c.a().dtype();
                vec(c.a());
                mv.visitFieldInsn(GETSTATIC, V + "VectorOperators", c.op().name(), "L" + V + "VectorOperators$Comparison;");
                vec(c.b());
                mv.visitMethodInsn(INVOKEVIRTUAL, cls(t), "compare",
                        "(L" + V + "VectorOperators$Comparison;" + VEC_D + ")" + MASK_D, false);
                return t;
            }
            case And a -> {
                return logic(a.a(), a.b(), false);
            }
            case Or o -> {
                return logic(o.a(), o.b(), true);
            }
            case Not n -> {
                DType t = maskOf(n.a());
                mv.visitMethodInsn(INVOKEVIRTUAL, MASK, "not", "()" + MASK_D, false);
                return t;
            }
            case Var x -> {
                mv.visitVarInsn(ALOAD, letSlots.get(x));
                return maskTypes.get(x);
            }
            case BufferLoad l -> {
                perLaneScalar(l);
                return maskType;
            }
            case Cast c when !VectorCheck.vectorType(c.value().dtype()) -> {
                perLaneScalar(c);
                return maskType;
            }
            case Cast c -> {
                DType from = c.value().dtype();
                vec(c.value());
                mv.visitFieldInsn(GETSTATIC, V + "VectorOperators", "NE", "L" + V + "VectorOperators$Comparison;");
                mv.visitInsn(LCONST_0);
                mv.visitMethodInsn(INVOKEVIRTUAL, cls(from), "compare",
                        "(L" + V + "VectorOperators$Comparison;J)" + MASK_D, false);
                return from;
            }
            case Select s -> {
                if (!varies(s.cond())) {
                    Label no = new Label(), end = new Label();
                    ScalarGen.emit(g, s.cond());
                    mv.visitJumpInsn(IFEQ, no);
                    castMask(maskOf(s.t()), maskType);
                    mv.visitJumpInsn(GOTO, end);
                    mv.visitLabel(no);
                    castMask(maskOf(s.f()), maskType);
                    mv.visitLabel(end);
                    return maskType;
                }
                // (t and c) or (f and not c)
                int mark = g.mark();
                int c = g.newRefLocal();
                castMask(maskOf(s.cond()), maskType);
                mv.visitVarInsn(ASTORE, c);
                int saved = mask;
                mask = narrowed(c, false);
                castMask(maskOf(s.t()), maskType);
                mv.visitVarInsn(ALOAD, c);
                mv.visitMethodInsn(INVOKEVIRTUAL, MASK, "and", "(" + MASK_D + ")" + MASK_D, false);
                mask = saved;
                mask = narrowed(c, true);
                castMask(maskOf(s.f()), maskType);
                mv.visitVarInsn(ALOAD, c);
                mv.visitMethodInsn(INVOKEVIRTUAL, MASK, "andNot", "(" + MASK_D + ")" + MASK_D, false);
                mask = saved;
                mv.visitMethodInsn(INVOKEVIRTUAL, MASK, "or", "(" + MASK_D + ")" + MASK_D, false);
                g.release(mark);
                return maskType;
            }
            default -> throw new IllegalStateException("not a mask: " + ExprPrinter.print(e));
        }
    }

    /** {@code a && b} or {@code a || b}: b is evaluated only on the lanes where it decides. */
    private DType logic(Expr a, Expr b, boolean or) {
        int mark = g.mark();
        int ma = g.newRefLocal();
        castMask(maskOf(a), maskType);
        mv.visitVarInsn(ASTORE, ma);
        int saved = mask;
        mask = narrowed(ma, or);
        castMask(maskOf(b), maskType);
        mask = saved;
        mv.visitVarInsn(ALOAD, ma);
        mv.visitMethodInsn(INVOKEVIRTUAL, MASK, or ? "or" : "and", "(" + MASK_D + ")" + MASK_D, false);
        g.release(mark);
        return maskType;
    }

    private final Map<Var, DType> maskTypes = new IdentityHashMap<>();

    // ---- lane by lane ----------------------------------------------------------------------------------

    /** Interface of the per-lane body: emits code for lane {@code j} (an int local) with the variable bound to its lane value. */
    private interface LaneBody {
        void emit(int j);
    }

    /**
     * For each lane j whose mask bit is set: binds the loop variable to {@code base + j} and emits
     * {@code body}. Indices given to the body must have varying lets substituted ({@link #lane0}).
     */
    private void perLane(LaneBody body) {
        int mark = g.mark();
        int j = g.newLocal(JType.INT);
        JType vt = base.type();
        MethodGen.Local lane = new MethodGen.Local(vt, g.newLocal(vt));
        Label top = new Label(), cond = new Label(), skip = new Label();
        g.iconst(0);
        mv.visitVarInsn(ISTORE, j);
        mv.visitJumpInsn(GOTO, cond);
        mv.visitLabel(top);
        if (mask >= 0) {
            mv.visitVarInsn(ALOAD, mask);
            mv.visitVarInsn(ILOAD, j);
            mv.visitMethodInsn(INVOKEVIRTUAL, MASK, "laneIsSet", "(I)Z", false);
            mv.visitJumpInsn(IFEQ, skip);
        }
        g.load(base);
        mv.visitVarInsn(ILOAD, j);
        if (vt == JType.LONG) mv.visitInsn(I2L);
        mv.visitInsn(vt == JType.LONG ? LADD : IADD);
        g.store(lane);
        MethodGen.Local prev = g.bind(var, lane);
        body.emit(j);
        g.bind(var, prev);
        mv.visitLabel(skip);
        mv.visitIincInsn(j, 1);
        mv.visitLabel(cond);
        mv.visitVarInsn(ILOAD, j);
        g.iconst(lanes);
        mv.visitJumpInsn(IF_ICMPLT, top);
        g.release(mark);
    }

    /**
     * An operator without an exact vector form: the operands are computed as vectors, then the
     * scalar operator runs lane by lane (lanes off the mask are skipped, so a masked-off lane never
     * divides by zero). {@code asDouble}: float32 operands are passed as doubles.
     */
    private void perLaneOp(DType t, List<Expr> args, boolean asDouble, Runnable op) {
        int mark = g.mark();
        int[] arrays = new int[args.size()];
        for (int k = 0; k < arrays.length; k++) {
            DType at = args.get(k).dtype();
            arrays[k] = g.newRefLocal();
            vec(args.get(k));
            mv.visitMethodInsn(INVOKEVIRTUAL, cls(at), "toArray", "()[" + JType.of(at).desc, false);
            mv.visitVarInsn(ASTORE, arrays[k]);
        }
        int res = newArray(t);
        perLane((j) -> {
            mv.visitVarInsn(ALOAD, res);
            mv.visitVarInsn(ILOAD, j);
            for (int k = 0; k < arrays.length; k++) {
                mv.visitVarInsn(ALOAD, arrays[k]);
                mv.visitVarInsn(ILOAD, j);
                mv.visitInsn(arrayLoad(args.get(k).dtype()));
                if (asDouble) mv.visitInsn(F2D);
            }
            op.run();
            mv.visitInsn(arrayStore(t));
        });
        fromArray(t, res);
        g.release(mark);
    }

    /**
     * A varying expression computed lane by lane with the scalar code (the loop variable bound to
     * each lane's value, varying lets replaced by their definitions); bool results become a mask.
     */
    private void perLaneScalar(Expr e) {
        DType t = e.dtype();
        int mark = g.mark();
        Expr lane = lane0(List.of(e)).get(0);
        int res = newArray(t);
        perLane((j) -> {
            mv.visitVarInsn(ALOAD, res);
            mv.visitVarInsn(ILOAD, j);
            ScalarGen.emit(g, lane);
            mv.visitInsn(t == DType.BOOL ? BASTORE : arrayStore(t));
        });
        if (t == DType.BOOL) {
            species(maskType);
            mv.visitVarInsn(ALOAD, res);
            mv.visitInsn(ICONST_0);
            mv.visitMethodInsn(INVOKESTATIC, MASK, "fromArray", "(" + SPECIES + "[ZI)" + MASK_D, false);
        } else {
            fromArray(t, res);
        }
        g.release(mark);
    }

    private int newArray(DType t) {
        int slot = g.newRefLocal();
        g.iconst(lanes);
        mv.visitIntInsn(NEWARRAY, switch (t) {
            case FLOAT32 -> T_FLOAT;
            case FLOAT64 -> T_DOUBLE;
            case INT32 -> T_INT;
            case BOOL -> T_BOOLEAN;
            default -> T_LONG;
        });
        mv.visitVarInsn(ASTORE, slot);
        return slot;
    }

    private void fromArray(DType t, int slot) {
        species(t);
        mv.visitVarInsn(ALOAD, slot);
        mv.visitInsn(ICONST_0);
        mv.visitMethodInsn(INVOKESTATIC, cls(t), "fromArray", "(" + SPECIES + "[" + JType.of(t).desc + "I)" + desc(t), false);
    }

    // ---- addresses ---------------------------------------------------------------------------------------

    /** The indices with varying lets replaced by their definitions: evaluated with the variable bound, they give one lane's address. */
    private List<Expr> lane0(List<Expr> idx) {
        if (letDefs.isEmpty()) return idx;
        return idx.stream().map(e -> Exprs.substitute(e, letDefs)).toList();
    }

    /** Whether consecutive lanes access consecutive elements: the address is affine in the variable with coefficient 1. */
    private boolean contiguous(Buffer b, List<Expr> idx) {
        long[] strides = ScalarGen.constStrides(g, b);
        long c = 0;
        for (int d = 0; d < idx.size(); d++) {
            Long k = coefficient(idx.get(d));
            if (k == null) return false;
            c += k * strides[d];
        }
        return c == 1;
    }

    /** The coefficient of the loop variable in {@code e}, if {@code e} is affine in it (else null). */
    private Long coefficient(Expr e) {
        if (!Exprs.uses(e, var)) return 0L;
        return switch (e) {
            case Var x -> x == var ? 1L : null;
            case Binary b -> {
                Long ca = coefficient(b.a()), cb = coefficient(b.b());
                if (ca == null || cb == null) yield null;
                yield switch (b.op()) {
                    case ADD -> ca + cb;
                    case SUB -> ca - cb;
                    case MUL -> b.a() instanceof IntImm k ? k.value() * cb
                            : b.b() instanceof IntImm k ? ca * k.value() : null;
                    default -> null;
                };
            }
            case Cast c -> c.dtype().isInt() && c.value().dtype().isInt() && c.dtype().bits() >= c.value().dtype().bits()
                    ? coefficient(c.value()) : null;
            default -> null;
        };
    }

    // ---- Vector API names ----------------------------------------------------------------------------------

    private static String cls(DType t) {
        return V + switch (t) {
            case FLOAT32 -> "FloatVector";
            case FLOAT64 -> "DoubleVector";
            case INT32 -> "IntVector";
            case INT64 -> "LongVector";
            default -> throw new KilnException("no Vector API lanes for " + t);
        };
    }

    private static String desc(DType t) { return "L" + cls(t) + ";"; }

    private static String letter(DType t) {
        return switch (t) {
            case FLOAT32 -> "F";
            case FLOAT64 -> "D";
            case INT32 -> "I";
            case INT64 -> "L";
            default -> throw new KilnException("no Vector API lanes for " + t);
        };
    }

    private static int arrayLoad(DType t) {
        return switch (JType.of(t)) {
            case INT -> IALOAD;
            case LONG -> LALOAD;
            case FLOAT -> FALOAD;
            case DOUBLE -> DALOAD;
        };
    }

    private static int arrayStore(DType t) {
        return switch (JType.of(t)) {
            case INT -> IASTORE;
            case LONG -> LASTORE;
            case FLOAT -> FASTORE;
            case DOUBLE -> DASTORE;
        };
    }

    /** Pushes the species of W lanes of {@code t}. */
    private void species(DType t) {
        mv.visitFieldInsn(GETSTATIC, cls(t), "SPECIES_" + lanes * t.bits(), SPECIES);
    }

    /** Pushes the current mask in the species of {@code t}. */
    private void loadMask(DType t) {
        mv.visitVarInsn(ALOAD, mask);
        castMask(maskType, t);
    }

    /** Converts the mask on the stack from the species of {@code from} to that of {@code to}. */
    private void castMask(DType from, DType to) {
        if (from == to) return;
        species(to);
        mv.visitMethodInsn(INVOKEVIRTUAL, MASK, "cast", "(" + SPECIES + ")" + MASK_D, false);
    }
}
