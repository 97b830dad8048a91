package dev.kiln.jit.jvm;

import static org.objectweb.asm.Opcodes.*;

import dev.kiln.arith.Simplifier;
import dev.kiln.ir.Buffer;
import dev.kiln.ir.BufferLoad;
import dev.kiln.ir.DType;
import dev.kiln.ir.Expr;
import dev.kiln.ir.Exprs;
import dev.kiln.ir.IntImm;
import dev.kiln.ir.Select;
import dev.kiln.ir.Var;
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
import dev.kiln.tir.Stmts;
import dev.kiln.tir.Store;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.objectweb.asm.Label;

/**
 * Register promotion (scalar replacement) of vector accumulators, the one thing C2 does not do for
 * us: it keeps a value in a register across loop iterations only if it lives in a local, never if it
 * lives in memory (a segment). For a serial loop whose body reads and writes the same few vectors of
 * a buffer at addresses that do not change inside the loop ({@code C.local[i, j] += A[i, k] *
 * B[k, j]} under {@code for k}), the generator loads those vectors into locals before the loop, the
 * vectorized loops inside read and write the locals (their chunks unrolled, so each chunk has its
 * own local), and the locals are stored back after the loop. The loop's body then has no store to
 * the accumulators: C2 keeps them in registers. Within each iteration of the innermost loop, the
 * operands the unrolled rows and chunks share are loaded once ({@link LoadReuse}).
 *
 * <p>A buffer is promoted only when this is exact: every access to it inside the loop is a
 * contiguous access of a vectorized loop (no tail mask, no conditional, no scalar access) at an
 * address invariant in the loop, the addresses are a common expression plus constants that are
 * multiples of the vector length (two chunks are the same vector or disjoint), nothing inside is
 * outlined into another method (which would read memory), and few enough vectors to stay in
 * registers ({@link #maxVectors}). Buffers are either allocations (disjoint scratch) or parameters,
 * which the kernel handle checks do not overlap when written. Loops of zero iterations skip the
 * loads and stores.
 */
final class Promotion {
    /** A promoted buffer: the reference indices (first access, chunk 0) and a local per vector position. */
    static final class Promoted {
        final Buffer buffer;
        final List<Expr> refIdx;
        final int lanes;
        final TreeMap<Long, Integer> slots = new TreeMap<>();

        Promoted(Buffer buffer, List<Expr> refIdx, int lanes) {
            this.buffer = buffer;
            this.refIdx = refIdx;
            this.lanes = lanes;
        }
    }

    /** One access to a buffer inside a vectorized loop. */
    private record Access(Object node, Buffer view, For loop, int lanes, List<Expr> indices) {}

    final Map<Buffer, Promoted> promoted = new IdentityHashMap<>();
    /** Each promoted access (Store or BufferLoad node): the element offset of its chunk 0 from the reference. */
    final Map<Object, Long> offsets = new IdentityHashMap<>();
    /** The vectorized loops that touch a promoted buffer: they run with their chunks unrolled. */
    final Set<For> loops = Collections.newSetFromMap(new IdentityHashMap<>());

    /** The loads reused within the current iteration of a loop inside this promotion ({@link LoadReuse}), or null. */
    LoadReuse reuse;

    private final Map<Buffer, List<Access>> accesses = new LinkedHashMap<>();
    private final Set<Buffer> refused = Collections.newSetFromMap(new IdentityHashMap<>());
    private boolean abandon;

    private Promotion() {}

    /**
     * Whether promotion is on: it is unless the system property {@code kiln.jvm.promote} is
     * {@code false} (read at each compile; for A/B measurements, with the compile cache cleared).
     */
    static boolean enabled() {
        return !"false".equals(System.getProperty("kiln.jvm.promote"));
    }

    /** The vector locals a promotion may use in all: accumulators plus operands must fit the registers. */
    static int maxVectors(int vectorBits) {
        return dev.kiln.target.JvmRegisterTiles.maxVectors(vectorBits);
    }

    /** The local holding the vector a promoted Store or BufferLoad {@code node} accesses in chunk {@code chunk}. */
    static Integer slot(MethodGen g, Object node, Buffer b, int chunk) {
        if (chunk < 0) return null;
        for (Promotion p : g.promotions) {
            Long d = p.offsets.get(node);
            if (d != null) {
                Promoted pr = p.promoted.get(b.base());
                return pr.slots.get(d + (long) chunk * pr.lanes);
            }
        }
        return null;
    }

    /** Whether vectorized loop {@code f} must run with its chunks unrolled (it touches a promoted buffer). */
    static boolean unrolls(MethodGen g, For f) {
        for (Promotion p : g.promotions) if (p.loops.contains(f)) return true;
        return false;
    }

    /** Emits serial loop {@code f}, with the accumulators it can keep in locals promoted. */
    static void serialLoop(MethodGen g, For f) {
        Promotion p = g.cls.vectorApi && enabled() ? plan(g, f) : null;
        if (p != null && TileMethods.outlines(g, f)) {
            Outliner.callSerial(g, f, f);
            return;
        }
        if (p == null) {
            Promotion outer = g.promotions.isEmpty() ? null : g.promotions.get(g.promotions.size() - 1);
            LoadReuse.emitLoop(g, outer, f, () -> StmtEmitter.serial(g, f, () -> StmtEmitter.emit(g, f.body())));
            return;
        }
        int mark = g.mark();
        for (Promoted pr : p.promoted.values()) pr.slots.replaceAll((pos, s) -> g.newRefLocal());

        Label skip = new Label();
        ScalarGen.emit(g, f.extent());
        if (JType.of(f.extent().dtype()) == JType.LONG) {
            g.mv.visitInsn(LCONST_0);
            g.mv.visitInsn(LCMP);
        }
        g.mv.visitJumpInsn(IFLE, skip);
        for (Promoted pr : p.promoted.values()) {
            for (Map.Entry<Long, Integer> e : pr.slots.entrySet()) move(g, pr, e.getKey(), e.getValue(), true);
        }
        for (Promoted pr : p.promoted.values()) {
            g.cls.promoted("loop '" + f.var().name() + "' keeps " + pr.slots.size() + " vector(s) of '"
                    + pr.buffer.name() + "' in locals");
        }
        g.promotions.add(p);
        LoadReuse.emitLoop(g, p, f, () -> StmtEmitter.serial(g, f, () -> StmtEmitter.emit(g, f.body())));
        g.promotions.remove(g.promotions.size() - 1);
        for (Promoted pr : p.promoted.values()) {
            for (Map.Entry<Long, Integer> e : pr.slots.entrySet()) move(g, pr, e.getKey(), e.getValue(), false);
        }
        g.mv.visitLabel(skip);
        g.release(mark);
    }

    /** Loads the vector at element offset {@code pos} from the reference into {@code slot}, or stores it back. */
    private static void move(MethodGen g, Promoted pr, long pos, int slot, boolean load) {
        Buffer b = pr.buffer;
        DType t = b.dtype();
        MethodGen.BufRef r = g.buffer(b, load ? "loaded from" : "stored to");
        String cls = VectorLanes.cls(t);
        String seg = "L" + ScalarGen.SEGMENT + ";";
        if (load) {
            g.mv.visitFieldInsn(GETSTATIC, cls, "SPECIES_" + pr.lanes * t.bits(), VectorLanes.SPECIES);
        } else {
            g.mv.visitVarInsn(ALOAD, slot);
            ExactVectors.exact(g.mv, t, pr.lanes * t.bits());
        }
        g.mv.visitVarInsn(ALOAD, r.segSlot());
        ScalarGen.address(g, b, pr.refIdx, r.byteBase() + pos * t.bytes());
        g.mv.visitFieldInsn(GETSTATIC, "java/nio/ByteOrder", VectorLanes.ORDER, "Ljava/nio/ByteOrder;");
        if (load) {
            g.mv.visitMethodInsn(
                    INVOKESTATIC,
                    cls,
                    "fromMemorySegment",
                    "(" + VectorLanes.SPECIES + seg + "JLjava/nio/ByteOrder;)" + VectorLanes.desc(t),
                    false);
            g.mv.visitVarInsn(ASTORE, slot);
        } else {
            g.mv.visitMethodInsn(INVOKEVIRTUAL, cls, "intoMemorySegment", "(" + seg + "JLjava/nio/ByteOrder;)V", false);
        }
    }

    // ---- planning ------------------------------------------------------------------------------------

    /** What can be promoted around serial loop {@code f}, or null if nothing. */
    static Promotion plan(MethodGen g, For f) {
        Promotion p = new Promotion();
        p.walk(g, f.body(), null);
        if (p.abandon || p.accesses.isEmpty()) return null;
        int budget = maxVectors(g.cls.vectorBits);
        for (Map.Entry<Buffer, List<Access>> e : p.accesses.entrySet()) {
            Buffer b = e.getKey();
            if (p.refused.contains(b) || !g.bufs.containsKey(b) || promotedOutside(g, b)) continue;
            if (!VectorCheck.vectorType(b.dtype())) continue;
            Promoted pr = p.promote(g, b, e.getValue());
            if (pr == null || pr.slots.size() > budget) continue;
            budget -= pr.slots.size();
            p.promoted.put(b, pr);
        }
        if (p.promoted.isEmpty()) return null;
        p.offsets.keySet().removeIf(node -> !p.isPromotedNode(node));
        for (Map.Entry<Buffer, List<Access>> e : p.accesses.entrySet()) {
            if (p.promoted.containsKey(e.getKey())) for (Access a : e.getValue()) p.loops.add(a.loop());
        }
        return p;
    }

    private boolean isPromotedNode(Object node) {
        Buffer b = node instanceof Store s
                ? s.buffer().base()
                : ((BufferLoad) node).buffer().base();
        return promoted.containsKey(b);
    }

    private static boolean promotedOutside(MethodGen g, Buffer b) {
        for (Promotion p : g.promotions) if (p.promoted.containsKey(b)) return true;
        return false;
    }

    /** Checks the accesses to {@code b} and gives each vector position a (placeholder) slot; null: not exact. */
    private Promoted promote(MethodGen g, Buffer b, List<Access> list) {
        Buffer view = list.get(0).view();
        long[] strides = ScalarGen.constStrides(g, view);
        Simplifier simp = new Simplifier();
        int lanes = list.get(0).lanes();
        List<Expr> ref = null;
        Map<Object, Long> found = new IdentityHashMap<>();
        Promoted pr = null;
        for (Access a : list) {
            if (a.lanes() != lanes || a.view().dtype() != view.dtype()) return null;
            if (!java.util.Arrays.equals(ScalarGen.constStrides(g, a.view()), strides)) return null;
            For v = a.loop();
            List<Expr> at0 = subst(a.indices(), v.var(), v.min());
            List<Expr> at1 = subst(a.indices(), v.var(), v.min().add(1));
            long step = 0;
            for (int d = 0; d < at0.size(); d++) {
                Long c = constant(simp, at1.get(d), at0.get(d));
                if (c == null) return null;
                step += c * strides[d];
            }
            if (step != 1) return null;
            for (Expr e : at0) {
                if (!boundOutside(g, e)) return null;
            }
            if (ref == null) {
                ref = at0;
                pr = new Promoted(view, ref, lanes);
            }
            long off = 0;
            for (int d = 0; d < at0.size(); d++) {
                if (at0.get(d).dtype() != ref.get(d).dtype()) return null;
                Long c = constant(simp, at0.get(d), ref.get(d));
                if (c == null) return null;
                off += c * strides[d];
            }
            if (Math.floorMod(off, lanes) != 0) return null;
            long extent = ((IntImm) v.extent()).value();
            for (long c = 0; c < extent / lanes; c++) pr.slots.put(off + c * lanes, -1);
            found.put(a.node(), off);
        }
        offsets.putAll(found);
        return pr;
    }

    private static List<Expr> subst(List<Expr> idx, Var v, Expr value) {
        Map<Var, Expr> m = Map.of(v, value);
        return idx.stream().map(e -> Exprs.substitute(e, m)).toList();
    }

    private static Long constant(Simplifier simp, Expr a, Expr b) {
        if (a.dtype() != b.dtype()) return null;
        return simp.simplify(a.sub(b)) instanceof IntImm c ? c.value() : null;
    }

    private static boolean boundOutside(MethodGen g, Expr e) {
        boolean[] ok = {true};
        Exprs.forEach(e, x -> {
            if (x instanceof Var v && !g.vars.containsKey(v)) ok[0] = false;
        });
        return ok[0];
    }

    /** Collects accesses; {@code vector}: the vectorized loop being walked, or null. */
    private void walk(MethodGen g, Stmt s, For vector) {
        if (abandon) return;
        switch (s) {
            case For f -> {
                refuseLoads(f.min());
                refuseLoads(f.extent());
                if (f.kind() == ForKind.PARALLEL || f.kind() == ForKind.THREAD_BOUND) {
                    abandon = true; // outlined: its method reads memory, not our locals
                } else if (f.kind() == ForKind.VECTORIZED && vector == null) {
                    int w = VectorGen.lanes(g, f);
                    boolean simple = w > 0 && ((IntImm) f.extent()).value() % w == 0 && storesOnly(f.body());
                    if (simple) walk(g, f.body(), f);
                    else refuseAll(f.body());
                } else if (vector != null) {
                    refuseAll(f.body());
                } else {
                    walk(g, f.body(), null);
                }
            }
            case Store st -> {
                for (Expr e : st.indices()) refuseLoads(e);
                if (vector == null || varyingCondition(st.value(), vector.var())) {
                    refused.add(st.buffer().base());
                    refuseLoads(st.value());
                    return;
                }
                add(st.buffer().base(), new Access(st, st.buffer(), vector, VectorGen.lanes(g, vector), st.indices()));
                Exprs.forEach(st.value(), x -> {
                    if (x instanceof BufferLoad l) {
                        for (Expr e : l.indices()) refuseLoads(e);
                        add(
                                l.buffer().base(),
                                new Access(l, l.buffer(), vector, VectorGen.lanes(g, vector), l.indices()));
                    }
                });
            }
            case Seq q -> {
                if (StmtEmitter.splits(q)) {
                    abandon = true; // its members may be outlined
                    return;
                }
                for (Stmt c : q.stmts()) walk(g, c, vector);
            }
            case IfThenElse i -> {
                refuseLoads(i.cond());
                refuseAll(i.then());
                if (i.otherwise() != null) refuseAll(i.otherwise());
            }
            case Let l -> {
                refuseLoads(l.value());
                if (vector != null) refuseAll(l.body());
                else walk(g, l.body(), null);
            }
            case Allocate a -> walk(g, a.body(), vector);
            case Evaluate e -> refuseLoads(e.value());
            case Pragma p -> walk(g, p.body(), vector);
            case Barrier b -> {}
        }
    }

    private void add(Buffer b, Access a) {
        accesses.computeIfAbsent(b, k -> new ArrayList<>()).add(a);
    }

    static boolean storesOnly(Stmt s) {
        return switch (s) {
            case Store st -> true;
            case Seq q -> q.stmts().stream().allMatch(Promotion::storesOnly);
            default -> false;
        };
    }

    /** Whether {@code e} has a condition that differs between lanes (the code under it runs masked). */
    private static boolean varyingCondition(Expr e, Var v) {
        boolean[] hit = {false};
        Exprs.forEach(e, x -> {
            if ((x instanceof Select || x.dtype() == DType.BOOL) && Exprs.uses(x, v)) hit[0] = true;
        });
        return hit[0];
    }

    private void refuseLoads(Expr e) {
        Exprs.forEach(e, x -> {
            if (x instanceof BufferLoad l) refused.add(l.buffer().base());
        });
    }

    /** Every buffer accessed in {@code s} stays in memory. */
    private void refuseAll(Stmt s) {
        Stmts.forEachStmt(s, x -> {
            if (x instanceof Store st) refused.add(st.buffer().base());
            if (x instanceof For f && (f.kind() == ForKind.PARALLEL || f.kind() == ForKind.THREAD_BOUND)) {
                abandon = true;
            }
            if (x instanceof Seq q && StmtEmitter.splits(q)) abandon = true;
        });
        Stmts.forEachExprNode(s, x -> {
            if (x instanceof BufferLoad l) refused.add(l.buffer().base());
        });
    }
}
