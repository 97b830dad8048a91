package dev.kiln.jit.jvm;

import static org.objectweb.asm.Opcodes.*;

import dev.kiln.ir.Binary;
import dev.kiln.ir.Buffer;
import dev.kiln.ir.BufferLoad;
import dev.kiln.ir.Cast;
import dev.kiln.ir.DType;
import dev.kiln.ir.Expr;
import dev.kiln.ir.Exprs;
import dev.kiln.ir.IntImm;
import dev.kiln.ir.KilnException;
import dev.kiln.ir.Var;
import java.nio.ByteOrder;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.objectweb.asm.Label;
import org.objectweb.asm.MethodVisitor;

/**
 * The state and the lane machinery shared by the vector code generator: the loop variable and its
 * lane-0 value, the lane count and the mask species, the varying let variables, the current mask;
 * lane-by-lane loops (scalar lanes), uniform values under masks, contiguity of addresses, and the
 * names of the Vector API classes the generated code calls. {@link VectorExprs} builds vector
 * expressions on it and {@link VectorGen} loops and statements.
 */
abstract class VectorLanes {
    static final String V = "jdk/incubator/vector/";
    static final String SPECIES = "L" + V + "VectorSpecies;";
    static final String MASK = V + "VectorMask";
    static final String MASK_D = "L" + MASK + ";";
    static final String VEC_D = "L" + V + "Vector;";
    static final String ORDER = ByteOrder.nativeOrder() == ByteOrder.LITTLE_ENDIAN ? "LITTLE_ENDIAN" : "BIG_ENDIAN";

    final MethodGen g;
    final MethodVisitor mv;
    final Var var;
    final int lanes;
    /** The element type of the current mask (every mask is kept in this species). */
    final DType maskType;

    final MethodGen.Local base;
    final Set<Var> varying = Collections.newSetFromMap(new IdentityHashMap<>());
    /** Varying let variables: the local holding the vector (or mask), and the definition, lets substituted. */
    final Map<Var, Integer> letSlots = new IdentityHashMap<>();

    final Map<Var, Expr> letDefs = new IdentityHashMap<>();
    /** The local holding the current mask (in {@link #maskType}'s species), or -1: all lanes. */
    int mask = -1;
    /** The chunk being emitted when the chunks are unrolled ({@link Promotion}), or -1. */
    int chunk = -1;
    /** The loop variable's value at lane 0 of that chunk, as an expression (when {@link #chunk} is set). */
    Expr chunkStart;

    final Map<Var, DType> maskTypes = new IdentityHashMap<>();

    VectorLanes(MethodGen g, Var var, int lanes, DType maskType, MethodGen.Local base) {
        this.g = g;
        this.mv = g.mv;
        this.var = var;
        this.lanes = lanes;
        this.maskType = maskType;
        this.base = base;
        varying.add(var);
    }

    /** Pushes {@code e} (of a vector type) as a vector of W lanes. */
    abstract void vec(Expr e);

    /** Pushes the mask of bool expression {@code e}; returns the element type of its species. */
    abstract DType maskOf(Expr e);

    /**
     * Runs {@code body} only if the current mask has a lane set. Serially, a branch no lane takes
     * never runs, and the uniform parts of it (computed once for all lanes) may only be valid where
     * some lane takes it: a load guarded by a condition on an outer loop, for example.
     */
    void ifAnyLane(Runnable body) {
        Label skip = new Label();
        mv.visitVarInsn(ALOAD, mask);
        mv.visitMethodInsn(INVOKEVIRTUAL, MASK, "anyTrue", "()Z", false);
        mv.visitJumpInsn(IFEQ, skip);
        body.run();
        mv.visitLabel(skip);
    }

    void zero(JType t) {
        mv.visitInsn(
                switch (t) {
                    case INT -> ICONST_0;
                    case LONG -> LCONST_0;
                    case FLOAT -> FCONST_0;
                    case DOUBLE -> DCONST_0;
                });
    }

    /** Whether computing {@code e} can fail (a load out of bounds, a division by zero) where no lane needs it. */
    static boolean mayFail(Expr e) {
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
    void uniform(Expr e, Runnable push, Runnable zero) {
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
    int narrowed(int slot, boolean negate) {
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

    // ---- values --------------------------------------------------------------------------------------

    boolean varies(Expr e) {
        boolean[] hit = {false};
        Exprs.forEach(e, x -> {
            if (x instanceof Var v && varying.contains(v)) hit[0] = true;
        });
        return hit[0];
    }

    // ---- lane by lane ----------------------------------------------------------------------------------

    /**
     * Interface of the per-lane body: emits code for lane {@code j} (an int local) with the variable bound to its lane
     * value.
     */
    interface LaneBody {
        void emit(int j);
    }

    /**
     * For each lane j whose mask bit is set: binds the loop variable to {@code base + j} and emits
     * {@code body}. Indices given to the body must have varying lets substituted ({@link #lane0}).
     */
    void perLane(LaneBody body) {
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

    int newArray(DType t) {
        int slot = g.newRefLocal();
        g.iconst(lanes);
        mv.visitIntInsn(
                NEWARRAY,
                switch (t) {
                    case FLOAT32 -> T_FLOAT;
                    case FLOAT64 -> T_DOUBLE;
                    case INT32 -> T_INT;
                    case BOOL -> T_BOOLEAN;
                    default -> T_LONG;
                });
        mv.visitVarInsn(ASTORE, slot);
        return slot;
    }

    void fromArray(DType t, int slot) {
        species(t);
        mv.visitVarInsn(ALOAD, slot);
        mv.visitInsn(ICONST_0);
        mv.visitMethodInsn(
                INVOKESTATIC, cls(t), "fromArray", "(" + SPECIES + "[" + JType.of(t).desc + "I)" + desc(t), false);
    }

    // ---- addresses ---------------------------------------------------------------------------------------

    /**
     * The indices with varying lets replaced by their definitions: evaluated with the variable bound, they give one
     * lane's address.
     */
    List<Expr> lane0(List<Expr> idx) {
        if (letDefs.isEmpty()) return idx;
        return idx.stream().map(e -> Exprs.substitute(e, letDefs)).toList();
    }

    /**
     * Whether consecutive lanes access consecutive elements: the address is affine in the variable with coefficient 1.
     */
    boolean contiguous(Buffer b, List<Expr> idx) {
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
    Long coefficient(Expr e) {
        if (!Exprs.uses(e, var)) return 0L;
        return switch (e) {
            case Var x -> x == var ? 1L : null;
            case Binary b -> {
                Long ca = coefficient(b.a()), cb = coefficient(b.b());
                if (ca == null || cb == null) yield null;
                yield switch (b.op()) {
                    case ADD -> ca + cb;
                    case SUB -> ca - cb;
                    case MUL ->
                        b.a() instanceof IntImm k ? k.value() * cb : b.b() instanceof IntImm k ? ca * k.value() : null;
                    default -> null;
                };
            }
            case Cast c ->
                c.dtype().isInt()
                                && c.value().dtype().isInt()
                                && c.dtype().bits() >= c.value().dtype().bits()
                        ? coefficient(c.value())
                        : null;
            default -> null;
        };
    }

    // ---- Vector API names ----------------------------------------------------------------------------------

    static String cls(DType t) {
        return V
                + switch (t) {
                    case FLOAT32 -> "FloatVector";
                    case FLOAT64 -> "DoubleVector";
                    case INT32 -> "IntVector";
                    case INT64 -> "LongVector";
                    default -> throw new KilnException("no Vector API lanes for " + t);
                };
    }

    static String desc(DType t) {
        return "L" + cls(t) + ";";
    }

    static String letter(DType t) {
        return switch (t) {
            case FLOAT32 -> "F";
            case FLOAT64 -> "D";
            case INT32 -> "I";
            case INT64 -> "L";
            default -> throw new KilnException("no Vector API lanes for " + t);
        };
    }

    static int arrayLoad(DType t) {
        return switch (JType.of(t)) {
            case INT -> IALOAD;
            case LONG -> LALOAD;
            case FLOAT -> FALOAD;
            case DOUBLE -> DALOAD;
        };
    }

    static int arrayStore(DType t) {
        return switch (JType.of(t)) {
            case INT -> IASTORE;
            case LONG -> LASTORE;
            case FLOAT -> FASTORE;
            case DOUBLE -> DASTORE;
        };
    }

    /** Pushes the species of W lanes of {@code t}. */
    void species(DType t) {
        mv.visitFieldInsn(GETSTATIC, cls(t), "SPECIES_" + lanes * t.bits(), SPECIES);
    }

    /** Pushes the current mask in the species of {@code t}. */
    void loadMask(DType t) {
        mv.visitVarInsn(ALOAD, mask);
        castMask(maskType, t);
    }

    /** Converts the mask on the stack from the species of {@code from} to that of {@code to}. */
    void castMask(DType from, DType to) {
        if (from == to) return;
        species(to);
        mv.visitMethodInsn(INVOKEVIRTUAL, MASK, "cast", "(" + SPECIES + ")" + MASK_D, false);
    }
}
