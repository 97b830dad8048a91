package dev.kiln.autoschedule.sketch;

import dev.kiln.autoschedule.analysis.AccessAnalyzer;
import dev.kiln.autoschedule.analysis.StagePredicates;
import dev.kiln.schedule.ComputeAtKind;
import dev.kiln.schedule.ComputeAtStep;
import dev.kiln.schedule.Iter;
import dev.kiln.schedule.IterKind;
import dev.kiln.schedule.LoopState;
import dev.kiln.schedule.Stage;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;

/**
 * Row chains: the stages between a stage (or a placeholder) and the output that reduces it row by row, as softmax
 * and the norms do, which {@link MultiLevelTilingWithRowFusion} and {@link FuseRowReductions} compute per block of
 * output rows.
 */
public final class RowChains {
    private RowChains() {}

    /** The stages of a row chain: the output and, in stage order, those between the start and it. */
    public record RowChain(int output, List<Integer> between) {
        public RowChain {
            between = List.copyOf(between);
        }
    }

    /**
     * The chain from stage or placeholder {@code id} to the output it is reduced into row by row, or null: every
     * stage that reads {@code id} (directly or through others) is a root compute stage, exactly one of them is an
     * output, that output has {@code id}'s shape (rank 2 or more), only spatial loops and none split yet, at least
     * one stage between reduces, and every path from {@code id} to the output keeps its leading {@code rank - 1} axes
     * ({@link AccessAnalyzer#numCommonOuterIteratorsPath}).
     */
    public static RowChain of(AccessAnalyzer access, LoopState s, int id) {
        Stage p = s.stage(id);
        if (!p.isPlaceholder() && p.computeAt() != ComputeAtKind.ROOT) return null;
        TreeSet<Integer> reach = readers(s, id);
        int out = -1;
        boolean reduces = false;
        for (int c : reach) {
            Stage st = s.stage(c);
            if (st.isPlaceholder() || st.computeAt() != ComputeAtKind.ROOT) return null;
            if (StagePredicates.isOutput(access, s, c)) {
                if (out >= 0) return null;
                out = c;
            } else if (StagePredicates.hasReduceIter(st)) {
                reduces = true;
            }
        }
        if (out < 0 || !reduces || out != reach.last()) return null;
        Stage o = s.stage(out);
        List<Long> shape = p.op().output(0).shape().dims();
        int rank = shape.size();
        if (rank < 2 || !o.op().output(0).shape().dims().equals(shape)) return null;
        if (StagePredicates.hasReduceIter(o)
                || StagePredicates.isTiled(o)
                || o.iters().size() != rank) return null;
        for (Iter it : o.iters()) if (it.kind() != IterKind.SPATIAL) return null;
        if (access.numCommonOuterIteratorsPath(p.op(), o.op()) < rank - 1) return null;
        List<Integer> between = new ArrayList<>(reach);
        between.remove(Integer.valueOf(out));
        return new RowChain(out, between);
    }

    /**
     * Whether stage {@code id} was placed in a row block by a sketch: it is computed at a spatial loop of a root
     * output stage that has only spatial loops and reads it (directly or through others). No other CPU sketch rule
     * computes a stage at such a place; the annotation keeps these stages where the sketch put them (moving one out
     * of the block would leave its producers computed inside a loop that no longer encloses their readers).
     */
    public static boolean isRowFused(AccessAnalyzer access, LoopState s, int id) {
        Stage st = s.stage(id);
        if (st.computeAt() != ComputeAtKind.ITER) return false;
        int target = st.attachStage();
        Stage o = s.stage(target);
        if (o.computeAt() != ComputeAtKind.ROOT
                || !StagePredicates.isOutput(access, s, target)
                || StagePredicates.hasReduceIter(o)) return false;
        return readers(s, id).contains(target);
    }

    /**
     * {@code state} with every stage between the chain's start and its output (not inlined) computed at loop
     * {@code attach} of the output, readers first, so each one's readers are already inside that loop.
     */
    static LoopState computeBetweenAt(LoopState state, RowChain chain, int attach) {
        LoopState t = state;
        for (int k = chain.between().size() - 1; k >= 0; k--) {
            int q = chain.between().get(k);
            if (t.stage(q).computeAt() != ComputeAtKind.INLINED)
                t = t.apply(new ComputeAtStep(q, chain.output(), attach));
        }
        return t;
    }

    /** The stages that read stage {@code id}, directly or through others (looking through inlined stages). */
    private static TreeSet<Integer> readers(LoopState s, int id) {
        TreeSet<Integer> reach = new TreeSet<>();
        List<Integer> todo = new ArrayList<>(StagePredicates.consumers(s, id));
        while (!todo.isEmpty()) {
            int c = todo.remove(todo.size() - 1);
            if (reach.add(c)) todo.addAll(StagePredicates.consumers(s, c));
        }
        return reach;
    }
}
