package dev.kiln.interp;

import dev.kiln.ir.And;
import dev.kiln.ir.Binary;
import dev.kiln.ir.Buffer;
import dev.kiln.ir.BufferLoad;
import dev.kiln.ir.Call;
import dev.kiln.ir.Cast;
import dev.kiln.ir.Compare;
import dev.kiln.ir.DType;
import dev.kiln.ir.Expr;
import dev.kiln.ir.ExprPrinter;
import dev.kiln.ir.Exprs;
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
import dev.kiln.tir.Allocate;
import dev.kiln.tir.Barrier;
import dev.kiln.tir.Evaluate;
import dev.kiln.tir.For;
import dev.kiln.tir.IfThenElse;
import dev.kiln.tir.Let;
import dev.kiln.tir.Pragma;
import dev.kiln.tir.PrimFunc;
import dev.kiln.tir.Seq;
import dev.kiln.tir.Stmt;
import dev.kiln.tir.Store;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

/**
 * Compiles a {@link PrimFunc} once into a tree of typed nodes: variables and buffers are resolved
 * to slots of a {@link Frame}, constants are rounded to their type, affine integer expressions
 * become one node, and every operator picks a node class for its type. All IR dispatch happens
 * here; the nodes never look at the IR again.
 */
final class Compiler {
    private final String fn;
    private final Map<Var, Integer> varSlots = new IdentityHashMap<>();
    private final Map<Buffer, Integer> bufSlots = new IdentityHashMap<>();
    // loop variables with a constant range, for the atoms of AffineForm
    private final Map<Var, AffineForm.Range> ranges = new IdentityHashMap<>();
    private int ints;
    private int floats;
    private int bufs;
    private int scratch;

    private Compiler(String fn) {
        this.fn = fn;
    }

    static Program compile(PrimFunc f) {
        Compiler c = new Compiler(f.name());
        List<long[]> shapes = new ArrayList<>();
        List<long[]> strides = new ArrayList<>();
        for (Buffer p : f.params()) {
            shapes.add(c.constShape(p, "parameter"));
            strides.add(c.constStrides(p, "parameter"));
            c.bufSlots.put(p.base(), c.bufs++);
        }
        ExecNode body = c.stmt(f.body());
        return new Program(f, body, c.ints, c.floats, c.bufs, c.scratch, shapes, strides);
    }

    // ---- statements -----------------------------------------------------------------------------

    private ExecNode stmt(Stmt s) {
        return switch (s) {
            case For f -> {
                ExecNode nest = reductionNest(f);
                if (nest != null) yield nest;
                LongNode min = lng(f.min());
                LongNode ext = lng(f.extent());
                int slot = ints++;
                Integer prev = varSlots.put(f.var(), slot);
                AffineForm.Range prevRange = enterRange(f);
                ExecNode body = stmt(f.body());
                restore(varSlots, f.var(), prev);
                restoreRange(f, prevRange);
                DType t = f.var().dtype();
                yield new StmtNodes.For(slot, min, ext, body, shift(t), t.isUnsigned());
            }
            case Store st -> store(st);
            case Allocate a -> {
                Buffer b = a.buffer();
                long bytes = Math.multiplyExact(span(constShape(b, "allocated"), constStrides(b, "allocated")), (long)
                        b.dtype().bytes());
                int slot = bufs++;
                Integer prev = bufSlots.put(b.base(), slot);
                ExecNode body = stmt(a.body());
                restore(bufSlots, b.base(), prev);
                yield new StmtNodes.Allocate(slot, scratch++, bytes, body);
            }
            case Seq q -> {
                if (q.stmts().isEmpty()) yield new StmtNodes.Nop();
                if (q.stmts().size() == 1) yield stmt(q.stmts().get(0));
                ExecNode[] out = new ExecNode[q.stmts().size()];
                for (int i = 0; i < out.length; i++) out[i] = stmt(q.stmts().get(i));
                yield new StmtNodes.Seq(out);
            }
            case IfThenElse i ->
                new StmtNodes.If(lng(i.cond()), stmt(i.then()), i.otherwise() == null ? null : stmt(i.otherwise()));
            case Let l -> {
                boolean isFloat = l.var().dtype().isFloat();
                LongNode lv = isFloat ? null : lng(l.value());
                DoubleNode dv = isFloat ? dbl(l.value()) : null;
                int slot = isFloat ? floats++ : ints++;
                Integer prev = varSlots.put(l.var(), slot);
                ExecNode body = stmt(l.body());
                restore(varSlots, l.var(), prev);
                yield isFloat ? new StmtNodes.LetDouble(slot, dv, body) : new StmtNodes.LetLong(slot, lv, body);
            }
            case Evaluate e ->
                e.value().dtype().isFloat()
                        ? new StmtNodes.EvalDouble(dbl(e.value()))
                        : new StmtNodes.EvalLong(lng(e.value()));
            // Hints only; the unroll pass acts on them, the interpreter runs the body.
            case Pragma p -> stmt(p.body());
            // Thread-bound loops run one after another, so every barrier is already satisfied.
            case Barrier b -> new StmtNodes.Nop();
        };
    }

    /**
     * A nest of loops around one accumulation {@code B[I] = B[I] + e} (float32, float64, int32 or int64), as every
     * reduction of a default lowering is ({@code for rc: conv[j, k, l] = conv[j, k, l] + x * w}), compiled so that
     * {@code B[I]} lives in a frame slot across the nest: its address is computed and checked once, it is loaded
     * before the first iteration and stored after the last. Null unless {@code f} is such a nest: every loop's extent
     * a positive constant (so the body runs at least once, as the accumulation would, and any out-of-bounds {@code I}
     * is reported as before), {@code I} free of the nest's variables, and {@code e} reading nothing of {@code B}. Each
     * iteration rounds or wraps as the plain store does ({@code float32}: a float add; {@code int32}: a 32-bit wrap),
     * so results are the same bit for bit.
     */
    private ExecNode reductionNest(For outer) {
        List<For> loops = new ArrayList<>();
        Stmt body = outer;
        while (true) {
            if (body instanceof Seq q && q.stmts().size() == 1) body = q.stmts().get(0);
            else if (body instanceof For g && g.extent() instanceof IntImm n && n.value() > 0) {
                loops.add(g);
                body = g.body();
            } else break;
        }
        if (loops.isEmpty()
                || !(body instanceof Store st)
                || accumulator(st.buffer().dtype()) == null) return null;
        Expr e = st.increment();
        if (e == null) return null;
        Buffer b = st.buffer();
        for (Expr i : st.indices()) for (For g : loops) if (Exprs.uses(i, g.var())) return null;
        boolean[] readsB = {false};
        Exprs.forEach(
                e, x -> readsB[0] |= x instanceof BufferLoad l && l.buffer().base() == b.base());
        if (readsB[0]) return null;
        int slot = bufSlot(b, "stored to");
        Access at = access(b, st.indices(), true);
        MemoryNodes.Accumulator type = accumulator(b.dtype());
        int acc = type.isFloat() ? floats++ : ints++;
        List<Integer> slots = new ArrayList<>();
        List<Integer> prevs = new ArrayList<>();
        List<LongNode> mins = new ArrayList<>();
        List<AffineForm.Range> prevRanges = new ArrayList<>();
        for (For g : loops) {
            mins.add(lng(g.min()));
            int s = ints++;
            slots.add(s);
            prevs.add(varSlots.put(g.var(), s));
            prevRanges.add(enterRange(g));
        }
        ExecNode inner = type.isFloat()
                ? new MemoryNodes.Accumulate(acc, dbl(e), type == MemoryNodes.Accumulator.F32)
                : new MemoryNodes.AccumulateLong(acc, lng(e), shift(b.dtype()));
        for (int k = loops.size() - 1; k >= 0; k--) {
            For g = loops.get(k);
            DType t = g.var().dtype();
            ExecNode dot = k == loops.size() - 1 ? DotLoops.of(this, g, slots.get(k), e, acc, type, inner) : null;
            inner = dot != null
                    ? dot
                    : new StmtNodes.For(slots.get(k), mins.get(k), lng(g.extent()), inner, shift(t), t.isUnsigned());
        }
        for (int k = loops.size() - 1; k >= 0; k--) {
            restore(varSlots, loops.get(k).var(), prevs.get(k));
            restoreRange(loops.get(k), prevRanges.get(k));
        }
        return new MemoryNodes.ReductionNest(slot, at, acc, type, inner);
    }

    /** The slot type a reduction nest accumulates {@code t} in, or null (narrow and unsigned types stay stores). */
    private static MemoryNodes.Accumulator accumulator(DType t) {
        return switch (t) {
            case FLOAT32 -> MemoryNodes.Accumulator.F32;
            case FLOAT64 -> MemoryNodes.Accumulator.F64;
            case INT32 -> MemoryNodes.Accumulator.I32;
            case INT64 -> MemoryNodes.Accumulator.I64;
            default -> null;
        };
    }

    private ExecNode store(Store st) {
        Buffer b = st.buffer();
        int slot = bufSlot(b, "stored to");
        Access at = access(b, st.indices(), true);
        Expr e = st.increment();
        if (b.dtype() == DType.FLOAT32 && e != null) return new MemoryNodes.AddToF32(slot, at, dbl(e));
        return switch (b.dtype()) {
            case FLOAT32 -> new MemoryNodes.StoreF32(slot, at, dbl(st.value()));
            case FLOAT64 -> new MemoryNodes.StoreF64(slot, at, dbl(st.value()));
            case FLOAT16 -> new MemoryNodes.StoreF16(slot, at, dbl(st.value()));
            case BFLOAT16 -> new MemoryNodes.StoreBF16(slot, at, dbl(st.value()));
            case INT8, UINT8, BOOL -> new MemoryNodes.StoreI8(slot, at, lng(st.value()));
            case INT16 -> new MemoryNodes.StoreI16(slot, at, lng(st.value()));
            case INT32 -> new MemoryNodes.StoreI32(slot, at, lng(st.value()));
            case INT64 -> new MemoryNodes.StoreI64(slot, at, lng(st.value()));
        };
    }

    // ---- integer and bool expressions -------------------------------------------------------------

    /** Compiles an integer or bool expression. */
    LongNode lng(Expr e) {
        if (e.dtype().isFloat()) throw unexpected(e);
        return switch (e) {
            case IntImm c -> new LeafNodes.ConstLong(c.value());
            case FloatImm c -> throw unexpected(c);
            case Var v -> new LeafNodes.VarLong(slotOf(v));
            case Binary b -> intBinary(b);
            case Compare c -> compare(c);
            case And a -> new LogicNodes.And(lng(a.a()), lng(a.b()));
            case Or o -> new LogicNodes.Or(lng(o.a()), lng(o.b()));
            case Not n -> new LogicNodes.Not(lng(n.a()));
            case Select s -> new LogicNodes.SelectLong(lng(s.cond()), lng(s.t()), lng(s.f()));
            case Cast c -> castToLong(c);
            case Call c -> {
                if (c.fn() != Intrinsic.ABS) throw unexpected(c);
                yield new IntNodes.Abs(
                        lng(c.args().get(0)), shift(c.dtype()), c.dtype().isUnsigned());
            }
            case BufferLoad l -> intLoad(l);
            case TensorRead r -> throw notLowered(r);
            case Reduce r -> throw notLowered(r);
        };
    }

    private LongNode intBinary(Binary b) {
        DType t = b.dtype();
        AffineForm form = AffineForm.of(b, t, this::slotOf, ranges::get);
        if (form != null && !form.hasAtoms()) return form.node(t);
        LongNode generic = genericBinary(b);
        if (form == null) return generic;
        LongNode tabulated = form.tabulated(t, this::slotOf, ranges::get, this::atomNode, generic);
        return tabulated != null ? tabulated : generic;
    }

    /** {@code f}'s variable's range, when its bounds are constants, recorded for the body; returns the one before. */
    private AffineForm.Range enterRange(For f) {
        if (f.min() instanceof IntImm m && f.extent() instanceof IntImm n)
            return ranges.put(f.var(), new AffineForm.Range(m.value(), n.value()));
        return ranges.remove(f.var());
    }

    private void restoreRange(For f, AffineForm.Range prev) {
        if (prev == null) ranges.remove(f.var());
        else ranges.put(f.var(), prev);
    }

    /** An atom of an {@link AffineForm} as a node of its own (not tabulated again: it is the atom itself). */
    LongNode atomNode(Expr e) {
        return e instanceof Binary b ? genericBinary(b) : lng(e);
    }

    private LongNode genericBinary(Binary b) {
        DType t = b.dtype();
        LongNode x = lng(b.a());
        LongNode y = lng(b.b());
        int sh = shift(t);
        boolean uns = t.isUnsigned();
        return switch (b.op()) {
            case ADD -> new IntNodes.Add(x, y, sh, uns);
            case SUB -> new IntNodes.Sub(x, y, sh, uns);
            case MUL -> new IntNodes.Mul(x, y, sh, uns);
            case DIV -> throw unexpected(b);
            case FLOORDIV -> new IntNodes.FloorDiv(x, y, sh, uns, b, fn);
            case FLOORMOD -> new IntNodes.FloorMod(x, y, sh, uns, b, fn);
            case TRUNCDIV -> new IntNodes.TruncDiv(x, y, sh, uns, b, fn);
            case TRUNCMOD -> new IntNodes.TruncMod(x, y, sh, uns, b, fn);
            case MIN -> new IntNodes.Min(x, y);
            case MAX -> new IntNodes.Max(x, y);
        };
    }

    private LongNode compare(Compare c) {
        if (c.a().dtype().isFloat()) {
            DoubleNode x = dbl(c.a());
            DoubleNode y = dbl(c.b());
            return switch (c.op()) {
                case EQ -> new LogicNodes.EqD(x, y);
                case NE -> new LogicNodes.NeD(x, y);
                case LT -> new LogicNodes.LtD(x, y);
                case LE -> new LogicNodes.LeD(x, y);
                case GT -> new LogicNodes.GtD(x, y);
                case GE -> new LogicNodes.GeD(x, y);
            };
        }
        LongNode x = lng(c.a());
        LongNode y = lng(c.b());
        return switch (c.op()) {
            case EQ -> new LogicNodes.EqL(x, y);
            case NE -> new LogicNodes.NeL(x, y);
            case LT -> new LogicNodes.LtL(x, y);
            case LE -> new LogicNodes.LeL(x, y);
            case GT -> new LogicNodes.GtL(x, y);
            case GE -> new LogicNodes.GeL(x, y);
        };
    }

    private LongNode castToLong(Cast c) {
        DType to = c.dtype();
        if (c.value().dtype().isFloat()) {
            DoubleNode v = dbl(c.value());
            return to.isBool() ? new CastNodes.DoubleToBool(v) : new CastNodes.DoubleToLong(v, to);
        }
        LongNode v = lng(c.value());
        if (to.isBool()) return new CastNodes.LongToBool(v);
        // every integer node's value is already wrapped to its type, so a widening that keeps every value is free
        return keepsEveryValue(c.value().dtype(), to) ? v : new CastNodes.Wrap(v, shift(to), to.isUnsigned());
    }

    /** Whether every value of integer type {@code from} is a value of integer type {@code to}. */
    static boolean keepsEveryValue(DType from, DType to) {
        if (from == to) return true;
        if (from.isBool() || to.isBool() || from.isFloat() || to.isFloat()) return false;
        if (from.isUnsigned()) return to.isUnsigned() ? to.bits() >= from.bits() : to.bits() > from.bits();
        return !to.isUnsigned() && to.bits() >= from.bits();
    }

    private LongNode intLoad(BufferLoad l) {
        Buffer b = l.buffer();
        int slot = bufSlot(b, "loaded from");
        Access at = access(b, l.indices(), false);
        return switch (b.dtype()) {
            case INT8 -> new MemoryNodes.LoadI8(slot, at);
            case UINT8 -> new MemoryNodes.LoadU8(slot, at);
            case BOOL -> new MemoryNodes.LoadBool(slot, at);
            case INT16 -> new MemoryNodes.LoadI16(slot, at);
            case INT32 -> new MemoryNodes.LoadI32(slot, at);
            case INT64 -> new MemoryNodes.LoadI64(slot, at);
            case FLOAT16, BFLOAT16, FLOAT32, FLOAT64 -> throw unexpected(l);
        };
    }

    // ---- floating expressions -------------------------------------------------------------------

    /** Compiles a floating expression. */
    DoubleNode dbl(Expr e) {
        if (!e.dtype().isFloat()) throw unexpected(e);
        return switch (e) {
            case FloatImm c -> new LeafNodes.ConstDouble(Numerics.roundFloat(c.dtype(), c.value()));
            case Var v -> new LeafNodes.VarDouble(slotOf(v));
            case Binary b -> floatBinary(b);
            case Select s -> new LogicNodes.SelectDouble(lng(s.cond()), dbl(s.t()), dbl(s.f()));
            case Cast c ->
                c.value().dtype().isFloat()
                        ? new CastNodes.Round(dbl(c.value()), FloatNodes.mode(c.dtype()))
                        : new CastNodes.LongToDouble(lng(c.value()), c.dtype());
            case Call c -> intrinsic(c);
            case BufferLoad l -> floatLoad(l);
            case TensorRead r -> throw notLowered(r);
            case Reduce r -> throw notLowered(r);
            case IntImm c -> throw unexpected(c);
            case Compare c -> throw unexpected(c);
            case And a -> throw unexpected(a);
            case Or o -> throw unexpected(o);
            case Not n -> throw unexpected(n);
        };
    }

    private DoubleNode floatBinary(Binary b) {
        DoubleNode x = dbl(b.a());
        DoubleNode y = dbl(b.b());
        int mode = FloatNodes.mode(b.dtype());
        boolean f32 = mode == FloatNodes.F32;
        return switch (b.op()) {
            case ADD -> f32 ? new FloatNodes.AddF32(x, y) : new FloatNodes.Add(x, y, mode);
            case SUB -> f32 ? new FloatNodes.SubF32(x, y) : new FloatNodes.Sub(x, y, mode);
            case MUL -> f32 ? new FloatNodes.MulF32(x, y) : new FloatNodes.Mul(x, y, mode);
            case DIV -> f32 ? new FloatNodes.DivF32(x, y) : new FloatNodes.Div(x, y, mode);
            case MIN -> new FloatNodes.Min(x, y);
            case MAX -> new FloatNodes.Max(x, y);
            case FLOORDIV, FLOORMOD, TRUNCDIV, TRUNCMOD -> throw unexpected(b);
        };
    }

    private DoubleNode intrinsic(Call c) {
        int mode = FloatNodes.mode(c.dtype());
        List<DoubleNode> a = new ArrayList<>();
        for (Expr x : c.args()) a.add(dbl(x));
        DoubleNode x = a.get(0);
        return switch (c.fn()) {
            case EXP -> new IntrinsicNodes.Exp(x, mode);
            case LOG -> new IntrinsicNodes.Log(x, mode);
            case SQRT -> new IntrinsicNodes.Sqrt(x, mode);
            case RSQRT -> new IntrinsicNodes.Rsqrt(x, mode);
            case TANH -> new IntrinsicNodes.Tanh(x, mode);
            case SIGMOID -> new IntrinsicNodes.Sigmoid(x, mode);
            case ERF -> new IntrinsicNodes.ErfNode(x, mode);
            case POW -> new IntrinsicNodes.Pow(x, a.get(1), mode);
            case EXACT_DIV -> new FloatNodes.Div(x, a.get(1), mode);
            case ABS -> new IntrinsicNodes.Abs(x, mode);
            case FLOOR -> new IntrinsicNodes.Floor(x, mode);
            case CEIL -> new IntrinsicNodes.Ceil(x, mode);
            case ROUND -> new IntrinsicNodes.Round(x, mode);
            case FMA -> new IntrinsicNodes.Fma(x, a.get(1), a.get(2), mode);
        };
    }

    private DoubleNode floatLoad(BufferLoad l) {
        Buffer b = l.buffer();
        int slot = bufSlot(b, "loaded from");
        Access at = access(b, l.indices(), false);
        return switch (b.dtype()) {
            case FLOAT32 -> new MemoryNodes.LoadF32(slot, at);
            case FLOAT64 -> new MemoryNodes.LoadF64(slot, at);
            case FLOAT16 -> new MemoryNodes.LoadF16(slot, at);
            case BFLOAT16 -> new MemoryNodes.LoadBF16(slot, at);
            case INT8, INT16, INT32, INT64, UINT8, BOOL -> throw unexpected(l);
        };
    }

    // ---- helpers ----------------------------------------------------------------------------------

    private Access access(Buffer b, List<Expr> indices, boolean store) {
        long[] shape = constShape(b, "accessed");
        long[] strides = constStrides(b, "accessed");
        int[] varSlot = new int[indices.size()];
        LongNode[] nodes = new LongNode[indices.size()];
        for (int d = 0; d < nodes.length; d++) {
            LongNode n = lng(indices.get(d));
            if (n instanceof LeafNodes.VarLong v) {
                varSlot[d] = v.slot;
            } else {
                varSlot[d] = -1;
                nodes[d] = n;
            }
        }
        return new Access(b, shape, strides, varSlot, nodes, store, fn);
    }

    /** The slot of a bound variable, or an error naming it. */
    int slotOf(Var v) {
        Integer s = varSlots.get(v);
        if (s == null) {
            throw new KilnException("variable '" + v.name() + "' (" + v.dtype() + ") is used in function '" + fn
                    + "' outside any loop or let that binds it");
        }
        return s;
    }

    /** The constant range of loop variable {@code v} around the node being compiled, or null. */
    AffineForm.Range rangeOf(Var v) {
        return ranges.get(v);
    }

    int bufSlot(Buffer b, String how) {
        Integer s = bufSlots.get(b.base());
        if (s == null) {
            throw new KilnException("buffer '" + b.name() + "' is " + how + " in function '" + fn
                    + "' but is neither a parameter nor allocated around this use");
        }
        return s;
    }

    long[] constShape(Buffer b, String role) {
        try {
            return b.constShape();
        } catch (KilnException e) {
            throw new KilnException(
                    "function '" + fn + "': " + role + " " + e.getMessage() + "; the interpreter needs constant shapes",
                    e);
        }
    }

    long[] constStrides(Buffer b, String role) {
        try {
            long[] st = b.constStrides();
            for (int d = 0; d < st.length; d++) {
                if (st[d] < 0) {
                    throw new KilnException("buffer '" + b.name() + "' stride " + d + " is negative: " + st[d]);
                }
            }
            return st;
        } catch (KilnException e) {
            throw new KilnException(
                    "function '" + fn + "': " + role + " " + e.getMessage()
                            + "; the interpreter needs constant non-negative strides",
                    e);
        }
    }

    private static long span(long[] shape, long[] strides) {
        long last = 0;
        for (int d = 0; d < shape.length; d++) last = Math.addExact(last, Math.multiplyExact(shape[d] - 1, strides[d]));
        return last + 1;
    }

    /** {@code 64 - bits} for integer types: the shift that wraps a long to the type. */
    static int shift(DType t) {
        return 64 - t.bits();
    }

    private static <K> void restore(Map<K, Integer> map, K key, Integer prev) {
        if (prev == null) map.remove(key);
        else map.put(key, prev);
    }

    private KilnException notLowered(Expr e) {
        String what =
                e instanceof TensorRead r ? "tensor read of '" + r.tensor().name() + "'" : "reduction";
        return new KilnException("function '" + fn + "' still contains a " + what + ": " + ExprPrinter.print(e)
                + "; the interpreter runs lowered loop IR only (lower the computation first, e.g. with LowerDefault)");
    }

    private KilnException unexpected(Expr e) {
        return new KilnException("function '" + fn + "': unexpected "
                + e.getClass().getSimpleName() + " of type " + e.dtype() + " here: " + ExprPrinter.print(e));
    }
}
