package dev.kiln.schedule;

import dev.kiln.arith.ConstIntBound;
import dev.kiln.arith.IntRange;
import dev.kiln.arith.Simplifier;
import dev.kiln.ir.Expr;
import dev.kiln.ir.Exprs;
import dev.kiln.ir.IntImm;
import dev.kiln.ir.Literals;
import dev.kiln.ir.MemoryScope;
import dev.kiln.ir.TensorRead;
import dev.kiln.ir.Var;
import dev.kiln.te.ComputeOp;
import dev.kiln.te.Tensor;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Bound inference: the region of a stage's output that must be computed where the stage is
 * computed. At root that is the whole tensor. Inside loop x of a consumer it is the union, over
 * every read of the stage by its consumers, of the read's indices when the loops inside x range
 * over their extents and the loops around x are fixed: a min that depends on the outer loops and
 * a constant extent (rounded up to a bound when it varies, capped at the tensor's size). Thread
 * loops around x that the stage's buffer is shared across also range over their extents: a
 * shared-memory tile computed inside a threadIdx loop holds what the whole block needs.
 */
final class InferBounds {
    private InferBounds() {}

    /**
     * The region of one stage, per spatial dimension: {@code min} (in the variables of the loops
     * around the attach point) and a constant {@code extent}; {@code clipped[d]} says the region
     * may reach outside the tensor, so the stage needs a guard there.
     */
    record Region(List<Expr> min, List<Long> extent, boolean[] clipped) {
        static Region full(ComputeOp op) {
            List<Expr> min = new ArrayList<>();
            List<Long> ext = new ArrayList<>();
            for (var a : op.axes()) {
                min.add(Literals.of(a.dtype(), 0L));
                ext.add(a.extent());
            }
            return new Region(min, ext, new boolean[ext.size()]);
        }

        boolean isFull(ComputeOp op) {
            for (int d = 0; d < extent.size(); d++) {
                if (!(min.get(d) instanceof IntImm m && m.value() == 0)
                        || extent.get(d) != op.axes().get(d).extent()) return false;
            }
            return true;
        }
    }

    /** What bound inference needs to know about an already-processed consumer. */
    interface Consumers {
        /** The value of each axis of stage k's op (spatial and reduce IterVars) in loop variables. */
        Map<Var, Expr> axisValues(int k);

        /** The bodies of stage k with inlined stages substituted. */
        List<Expr> bodies(int k);

        /** Ranges of the loop variables strictly inside loop {@code uid} of stage {@code c}. */
        Map<Var, IntRange> innerRanges(int c, int uid);

        /**
         * Ranges of the thread-bound loops around loop {@code uid} of stage {@code c} (that loop
         * included) across which a buffer in {@code scope} is shared, so its region must cover
         * all of their values: threadIdx and vthread for shared memory, every thread axis for
         * global memory, none for local memory (TVM's rule).
         */
        Map<Var, IntRange> sharedThreadRanges(int c, int uid, MemoryScope scope);

        /** Ranges of every loop variable made so far. */
        Map<Var, IntRange> allRanges();
    }

    static Region infer(LoopState s, int p, Consumers ctx) {
        Stage st = s.stages().get(p);
        ComputeOp op = st.computeOp();
        if (st.computeAt() != ComputeAtKind.ITER) return Region.full(op);
        int rank = op.axes().size();
        Set<Tensor> outs = Collections.newSetFromMap(new IdentityHashMap<>());
        outs.addAll(op.outputs());
        Map<Var, IntRange> relaxed = new IdentityHashMap<>(ctx.innerRanges(st.attachStage(), st.attachIter()));
        relaxed.putAll(ctx.sharedThreadRanges(st.attachStage(), st.attachIter(), st.scope()));
        Expr[] lo = new Expr[rank], hi = new Expr[rank];
        boolean[] unbounded = new boolean[rank];
        boolean anyRead = false;
        for (int k : s.consumers(p)) {
            Map<Var, Expr> axisValues = ctx.axisValues(k);
            List<TensorRead> reads = new ArrayList<>();
            for (Expr b : ctx.bodies(k)) {
                Exprs.forEach(b, e -> {
                    if (e instanceof TensorRead r && outs.contains(r.tensor())) reads.add(r);
                });
            }
            for (TensorRead r : reads) {
                anyRead = true;
                for (int d = 0; d < rank; d++) {
                    if (unbounded[d]) continue;
                    Expr idx = Exprs.substitute(r.indices().get(d), axisValues);
                    IndexBounds.Interval iv = IndexBounds.of(idx, relaxed);
                    if (iv == null) {
                        unbounded[d] = true;
                        continue;
                    }
                    lo[d] = lo[d] == null ? iv.min() : lo[d].min(iv.min());
                    hi[d] = hi[d] == null ? iv.max() : hi[d].max(iv.max());
                }
            }
        }
        if (!anyRead) return Region.full(op);
        Map<Var, IntRange> ranges = ctx.allRanges();
        Simplifier simp = new Simplifier(ranges);
        ConstIntBound bound = new ConstIntBound(ranges);
        List<Expr> min = new ArrayList<>();
        List<Long> ext = new ArrayList<>();
        boolean[] clipped = new boolean[rank];
        for (int d = 0; d < rank; d++) {
            long shape = op.axes().get(d).extent();
            Expr zero = Literals.of(op.axes().get(d).dtype(), 0L);
            if (unbounded[d]) {
                min.add(zero);
                ext.add(shape);
                continue;
            }
            Expr mn = simp.simplify(lo[d]);
            Expr extent = simp.simplify(hi[d].sub(lo[d]).add(1));
            long e =
                    extent instanceof IntImm c ? c.value() : bound.bound(extent).max();
            IntRange mr = bound.bound(mn);
            if (e >= shape || e <= 0) {
                min.add(zero);
                ext.add(shape);
                continue;
            }
            min.add(mn);
            ext.add(e);
            clipped[d] = mr.min() < 0 || mr.max() + e > shape;
        }
        return new Region(min, ext, clipped);
    }
}
