package dev.kiln.autoschedule.annotate;

import dev.kiln.autoschedule.SearchTask;
import dev.kiln.autoschedule.analysis.AccessAnalyzer;
import dev.kiln.autoschedule.analysis.IndexAccess;
import dev.kiln.ir.Expr;
import dev.kiln.ir.IntImm;
import dev.kiln.ir.IterVar;
import dev.kiln.ir.KilnException;
import dev.kiln.ir.Var;
import dev.kiln.schedule.ComputeAtKind;
import dev.kiln.schedule.Iter;
import dev.kiln.schedule.IterAnnotation;
import dev.kiln.schedule.IterKind;
import dev.kiln.schedule.LoopState;
import dev.kiln.schedule.ReorderStep;
import dev.kiln.schedule.SplitStep;
import dev.kiln.schedule.Stage;
import dev.kiln.te.ComputeOp;
import dev.kiln.te.Operation;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * Kiln's rule for the stages a sketch leaves alone that move data (transpositions, layout changes): their loops
 * keep the output's order, so the innermost loop writes contiguously and, in a transposition, reads its source a
 * row apart on every iteration. The attention workload's {@code value_T[h, d, l] = value[l, h, d]} read with a
 * 4 KiB stride that way runs 6x slower than in the other order (0.28 against 0.044 ms at 1 thread; measured in the
 * fifteenth session), and neither Ansor's rules nor its mutations ever reorder such a stage. Reordering alone moves
 * the stride to the writes; where the rows are far apart, either way every access of a row lands in the same few
 * cache sets (a stride of 6 KiB maps 128 rows to 2 of the L1's 64 sets), so a transposition is copied in square
 * blocks of one cache line per side, as a hand-written transpose is: a block's lines stay in L1 for both sides
 * (TBS 1,128,12,128 at 1 thread: the copy of {@code value_T} 0.23 ms in either order, 0.07 ms in 16 x 16 blocks;
 * nineteenth session, docs/PERFORMANCE.md).
 *
 * <p>For every compute stage with only spatial loops, untouched (one loop per axis, in the axes' order, none
 * annotated, nothing computed at them): if its largest source is read with a permutation (every index an axis
 * plus a constant, or a constant) and not contiguously by the innermost loop, the loop that reads it contiguously
 * is moved innermost. When both that loop and the innermost one are longer than a block (the cache line's elements:
 * 16 floats) and divide by it, both are split by the block instead, and the loops run block by block: the other
 * loops, the innermost loop's blocks, the reading loop's blocks, then within a block the reading loop and the
 * innermost loop (a block's writes stay contiguous; vectorized, the LLVM backend copies a block as whole vectors
 * loaded, transposed in registers and stored: its {@code TransposeBlock}). The
 * block's splits are ordinary split steps, so the tile-size mutation resizes them. Deterministic: it draws nothing.
 */
public record InitReadOrder() implements InitRule {
    public static final String NAME = "InitReadOrder";

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public LoopState apply(SearchTask task, LoopState state, SplittableRandom rng) {
        AccessAnalyzer access = AccessAnalyzer.of(state);
        LoopState s = state;
        try {
            for (int id = 0; id < s.stages().size(); id++) {
                int to = contiguousLoop(access, s, id);
                if (to < 0) continue;
                int block = block(task, s, id, to);
                s = block > 0 ? blocked(s, id, to, block) : reordered(s, id, to);
            }
            return s;
        } catch (KilnException e) {
            throw new InvalidSample(NAME, e.getMessage());
        }
    }

    /** Stage {@code id} with loop {@code to} moved innermost. */
    private static LoopState reordered(LoopState s, int id, int to) {
        int n = s.stage(id).iters().size();
        List<Integer> order = new ArrayList<>();
        for (int i = 0; i < n; i++) if (i != to) order.add(i);
        order.add(to);
        return s.apply(new ReorderStep(id, order));
    }

    /**
     * The block side for stage {@code id}, whose loop {@code to} reads contiguously: the elements of a cache line,
     * when both that loop and the innermost one are longer and divide by it; 0 when the stage is only reordered.
     */
    static int block(SearchTask task, LoopState s, int id, int to) {
        List<Iter> iters = s.stage(id).iters();
        int bytes = s.stage(id).op().output(0).dtype().bytes();
        int block = task.hardware().cacheLineBytes() / Math.max(1, bytes);
        if (block < 2) return 0;
        for (Long e :
                List.of(iters.get(to).extent(), iters.get(iters.size() - 1).extent())) {
            if (e == null || e <= block || e % block != 0) return 0;
        }
        return block;
    }

    /**
     * Stage {@code id} copied in {@code block} x {@code block} tiles: the innermost loop {@code w} and the reading
     * loop {@code c} split by the block, in the order (others, w.0, c.0, c.1, w.1).
     */
    private static LoopState blocked(LoopState s, int id, int to, int block) {
        int n = s.stage(id).iters().size();
        int inner = n - 1;
        s = s.apply(new SplitStep(id, inner, s.stage(id).iters().get(inner).extent(), List.of(block), true));
        s = s.apply(new SplitStep(id, to, s.stage(id).iters().get(to).extent(), List.of(block), true));
        // now: loops before `to` at their places, to.0 and to.1 at to and to + 1, the loops between `to` and the
        // innermost one moved up by one, the innermost loop's halves at n and n + 1
        List<Integer> order = new ArrayList<>();
        for (int i = 0; i < inner; i++) {
            if (i < to) order.add(i);
            else if (i > to) order.add(i + 1);
        }
        order.add(n);
        order.add(to);
        order.add(to + 1);
        order.add(n + 1);
        return s.apply(new ReorderStep(id, order));
    }

    /**
     * The loop of stage {@code id} to move innermost so that its largest source is read contiguously, or -1 when
     * the rule leaves the stage alone.
     */
    static int contiguousLoop(AccessAnalyzer access, LoopState s, int id) {
        Stage st = s.stage(id);
        if (st.isPlaceholder() || st.computeAt() == ComputeAtKind.INLINED) return -1;
        if (!(st.op() instanceof ComputeOp op) || !s.attachedTo(id).isEmpty()) return -1;
        List<IterVar> axes = op.axes();
        List<Iter> iters = st.iters();
        if (iters.size() < 2 || iters.size() != axes.size() || st.leaves().size() != st.numRoots()) return -1;
        for (int i = 0; i < iters.size(); i++) {
            Iter it = iters.get(i);
            if (it.kind() != IterKind.SPATIAL
                    || it.annotation() != IterAnnotation.NONE
                    || !it.name().equals(axes.get(i).name())) return -1;
        }
        Operation source = null;
        List<Expr> read = null;
        long largest = 0;
        for (Map.Entry<Operation, List<List<Expr>>> e : access.readFrom(op).entrySet()) {
            long size = 1;
            for (long d : e.getKey().output(0).shape().dims()) size *= d;
            if (size <= largest) continue;
            if (e.getValue().size() != 1) {
                source = null;
                largest = size;
                continue;
            }
            source = e.getKey();
            read = e.getValue().get(0);
            largest = size;
        }
        if (source == null) return -1;
        List<Long> dims = source.output(0).shape().dims();
        long[] stride = new long[axes.size()];
        long step = 1;
        for (int d = dims.size() - 1; d >= 0; d--) {
            Expr index = read.get(d);
            if (!(index instanceof IntImm)) {
                Var v = IndexAccess.shiftedVar(index);
                int pos = v == null ? -1 : axes.indexOf(v);
                if (pos < 0) return -1;
                stride[pos] += step;
            }
            step *= dims.get(d);
        }
        int inner = axes.size() - 1;
        if (stride[inner] <= 1) return -1; // contiguous already, or a broadcast along it
        for (int i = 0; i < inner; i++) {
            Long extent = iters.get(i).extent();
            if (stride[i] == 1 && (extent == null || extent > 1)) return i;
        }
        return -1;
    }
}
