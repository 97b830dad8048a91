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
import dev.kiln.ir.Not;
import dev.kiln.ir.Or;
import dev.kiln.ir.Select;
import dev.kiln.ir.Var;
import java.util.List;
import org.objectweb.asm.Label;

/**
 * Vector expressions: values of a vectorized loop's body as Vector API vectors (bool values as
 * masks), with uniform sub-expressions computed once as scalars and broadcast, and the operators
 * without an exact vector form computed lane by lane with the scalar code.
 */
abstract class VectorExprs extends VectorLanes {
    VectorExprs(MethodGen g, Var var, int lanes, DType maskType, MethodGen.Local base) {
        super(g, var, lanes, maskType, base);
    }

    /** Pushes a vector or, for bool, a mask (in its own species). */
    void value(Expr e) {
        if (e.dtype() == DType.BOOL) maskOf(e);
        else vec(e);
    }

    @Override
    void vec(Expr e) {
        LoadReuse p = LoadReuse.active(g, chunk);
        // reused within a promoted loop's iteration: whole uniform values (broadcasts) and vector loads
        if (p == null || !p.reusable(e) || varies(e) && !(e instanceof BufferLoad)) {
            vecFresh(e);
            return;
        }
        Object key = varies(e)
                ? List.of("vector", ((BufferLoad) e).buffer().base(), substituteVar(lane0(((BufferLoad) e).indices())))
                : List.of("broadcast", e);
        Integer slot = p.slot(key);
        if (slot != null) {
            mv.visitVarInsn(ALOAD, slot);
            ExactVectors.exact(mv, e.dtype(), lanes * e.dtype().bits());
            return;
        }
        vecFresh(e);
        slot = p.keep(key);
        if (slot != null) {
            mv.visitInsn(DUP);
            mv.visitVarInsn(ASTORE, slot);
        }
    }

    /** The indices with the loop variable replaced by its lane-0 value in the current chunk. */
    private List<Expr> substituteVar(List<Expr> idx) {
        java.util.Map<Var, Expr> m = java.util.Map.of(var, chunkStart);
        return idx.stream().map(x -> dev.kiln.ir.Exprs.substitute(x, m)).toList();
    }

    /** Pushes {@code e} as a vector, computed afresh. */
    private void vecFresh(Expr e) {
        DType t = e.dtype();
        if (!varies(e)
                && e instanceof Select s
                && g.guards.get(s) instanceof InvariantGuards.Guard h
                && InvariantGuards.vectorMask()) {
            // a hoisted guard: broadcast the unmasked load, then mask all lanes at once
            species(t);
            uniform(e, () -> h.emitLoad(g), () -> zero(JType.of(t)));
            mv.visitMethodInsn(
                    INVOKESTATIC, cls(t), "broadcast", "(" + SPECIES + JType.of(t).desc + ")" + desc(t), false);
            h.maskVector(g);
            return;
        }
        if (!varies(e)) {
            species(t);
            uniform(e, () -> ScalarGen.emit(g, e), () -> zero(JType.of(t)));
            mv.visitMethodInsn(
                    INVOKESTATIC, cls(t), "broadcast", "(" + SPECIES + JType.of(t).desc + ")" + desc(t), false);
            return;
        }
        switch (e) {
            case Var x -> {
                if (x == var) {
                    species(t);
                    g.load(base);
                    mv.visitMethodInsn(
                            INVOKESTATIC, cls(t), "broadcast", "(" + SPECIES + JType.of(t).desc + ")" + desc(t), false);
                    mv.visitInsn(ICONST_1);
                    mv.visitMethodInsn(INVOKEVIRTUAL, cls(t), "addIndex", "(I)" + desc(t), false);
                } else {
                    mv.visitVarInsn(ALOAD, letSlots.get(x));
                    ExactVectors.exact(mv, t, lanes * t.bits());
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

    void binary(Binary b) {
        DType t = b.dtype();
        String name =
                switch (b.op()) {
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
        if (b.op() == BinaryOp.ADD && g.cls.contract && (t == DType.FLOAT32 || t == DType.FLOAT64)) {
            // a fast-math target: a * b + c as one FMA (one rounding), as the LLVM backend's 'contract'
            Binary m = null;
            Expr addend = null;
            if (b.b() instanceof Binary x && x.op() == BinaryOp.MUL) {
                m = x;
                addend = b.a();
            } else if (b.a() instanceof Binary x && x.op() == BinaryOp.MUL) {
                m = x;
                addend = b.b();
            }
            if (m != null) {
                vec(m.a());
                vec(m.b());
                vec(addend);
                mv.visitMethodInsn(INVOKEVIRTUAL, cls(t), "fma", "(" + VEC_D + VEC_D + ")" + desc(t), false);
                return;
            }
        }
        vec(b.a());
        vec(b.b());
        mv.visitMethodInsn(INVOKEVIRTUAL, cls(t), name, "(" + VEC_D + ")" + desc(t), false);
    }

    void select(Select s) {
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

    void cast(Cast c) {
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
        mv.visitFieldInsn(
                GETSTATIC,
                V + "VectorOperators",
                letter(from) + "2" + letter(to),
                "L" + V + "VectorOperators$Conversion;");
        species(to);
        mv.visitInsn(ICONST_0);
        mv.visitMethodInsn(
                INVOKEVIRTUAL,
                V + "Vector",
                "convertShape",
                "(L" + V + "VectorOperators$Conversion;" + SPECIES + "I)" + VEC_D,
                false);
        mv.visitTypeInsn(CHECKCAST, cls(to));
    }

    void call(Call c) {
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

    void load(BufferLoad l) {
        Buffer b = l.buffer();
        DType t = b.dtype();
        Integer promoted = Promotion.slot(g, l, b, chunk);
        if (promoted != null) {
            mv.visitVarInsn(ALOAD, promoted);
            ExactVectors.exact(mv, t, lanes * t.bits());
            return;
        }
        MethodGen.BufRef r = g.buffer(b, "loaded from");
        List<Expr> idx = lane0(l.indices());
        if (contiguous(b, idx)) {
            species(t);
            mv.visitVarInsn(ALOAD, r.segSlot());
            ScalarGen.address(g, b, idx, r.byteBase());
            mv.visitFieldInsn(GETSTATIC, "java/nio/ByteOrder", ORDER, "Ljava/nio/ByteOrder;");
            if (mask >= 0) {
                loadMask(t);
                mv.visitMethodInsn(
                        INVOKESTATIC,
                        cls(t),
                        "fromMemorySegment",
                        "(" + SPECIES + "L" + ScalarGen.SEGMENT + ";JLjava/nio/ByteOrder;" + MASK_D + ")" + desc(t),
                        false);
            } else {
                mv.visitMethodInsn(
                        INVOKESTATIC,
                        cls(t),
                        "fromMemorySegment",
                        "(" + SPECIES + "L" + ScalarGen.SEGMENT + ";JLjava/nio/ByteOrder;)" + desc(t),
                        false);
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

    @Override
    DType maskOf(Expr e) {
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
                mv.visitFieldInsn(
                        GETSTATIC, V + "VectorOperators", c.op().name(), "L" + V + "VectorOperators$Comparison;");
                vec(c.b());
                mv.visitMethodInsn(
                        INVOKEVIRTUAL,
                        cls(t),
                        "compare",
                        "(L" + V + "VectorOperators$Comparison;" + VEC_D + ")" + MASK_D,
                        false);
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
            case Cast c
            when !VectorCheck.vectorType(c.value().dtype()) -> {
                perLaneScalar(c);
                return maskType;
            }
            case Cast c -> {
                DType from = c.value().dtype();
                vec(c.value());
                mv.visitFieldInsn(GETSTATIC, V + "VectorOperators", "NE", "L" + V + "VectorOperators$Comparison;");
                mv.visitInsn(LCONST_0);
                mv.visitMethodInsn(
                        INVOKEVIRTUAL,
                        cls(from),
                        "compare",
                        "(L" + V + "VectorOperators$Comparison;J)" + MASK_D,
                        false);
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
    DType logic(Expr a, Expr b, boolean or) {
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

    /**
     * An operator without an exact vector form: the operands are computed as vectors, then the
     * scalar operator runs lane by lane (lanes off the mask are skipped, so a masked-off lane never
     * divides by zero). {@code asDouble}: float32 operands are passed as doubles.
     */
    void perLaneOp(DType t, List<Expr> args, boolean asDouble, Runnable op) {
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
    void perLaneScalar(Expr e) {
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
}
