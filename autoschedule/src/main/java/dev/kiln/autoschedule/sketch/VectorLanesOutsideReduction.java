package dev.kiln.autoschedule.sketch;

import dev.kiln.autoschedule.SearchTask;
import dev.kiln.autoschedule.analysis.AccessAnalyzer;
import dev.kiln.autoschedule.analysis.StagePredicates;
import dev.kiln.ir.Expr;
import dev.kiln.ir.Exprs;
import dev.kiln.ir.Var;
import dev.kiln.schedule.IterKind;
import dev.kiln.schedule.LoopState;
import dev.kiln.schedule.ReorderStep;
import dev.kiln.schedule.SplitStep;
import dev.kiln.schedule.Stage;
import dev.kiln.te.ComputeOp;
import java.util.ArrayList;
import java.util.List;

/**
 * Kiln's sketch for a reduction without data reuse (no multi-level tiling) whose innermost output
 * axis is also the innermost, unit-stride index of everything it reads: a max or average pool in
 * NHWC, a sum over outer axes. Ansor leaves such a stage as it is, its reduction loops innermost,
 * so nothing can be vectorised ({@code InitVectorization} stops at a reduction loop) and the
 * search falls back on rfactor, which writes a partial result per window position to memory
 * (ResNet-50's max pool: a 2.4 MB buffer, 0.11 ms where the plain vectorised pool takes 0.06).
 * This rule splits that axis into an outer part and a whole number of vectors (one sketch per
 * inner size: 1, 2 and 4 vectors of the element type, those that divide the axis) and moves the
 * reduction loops between the two parts, so each output vector is accumulated across the window
 * in registers and the annotation vectorises the inner part and parallelises the outer loops.
 * The original state is kept too ({@link SketchRule.Condition#APPLY}); {@link SkipStage} yields it.
 */
public record VectorLanesOutsideReduction() implements SketchRule {
    /** The inner sizes tried, in vectors of the stage's element type. */
    static final int[] VECTORS = {1, 2, 4};

    @Override
    public String name() {
        return "VectorLanesOutsideReduction";
    }

    @Override
    public Condition condition(SearchTask task, AccessAnalyzer access, LoopState state, int stageId) {
        return innerSizes(task, access, state, stageId).isEmpty() ? Condition.SKIP : Condition.APPLY;
    }

    @Override
    public List<Derivation> apply(SearchTask task, AccessAnalyzer access, LoopState state, int stageId) {
        Stage st = state.stage(stageId);
        int last = leadingSpatial(st) - 1;
        int n = st.iters().size();
        List<Derivation> out = new ArrayList<>();
        for (int inner : innerSizes(task, access, state, stageId)) {
            LoopState s = state.apply(new SplitStep(stageId, last, st.iter(last).extent(), List.of(inner), true));
            // loops now: the spatial ones with the split axis as last.0 (at last) and last.1 (at last + 1),
            // then the reductions; last.1 goes innermost
            List<Integer> order = new ArrayList<>();
            for (int i = 0; i <= last; i++) order.add(i);
            for (int i = last + 2; i <= n; i++) order.add(i);
            order.add(last + 1);
            out.add(new Derivation(s.apply(new ReorderStep(stageId, order)), stageId - 1));
        }
        return out;
    }

    /**
     * The inner sizes this rule splits the stage's innermost axis into; empty where it does not apply: not a
     * reduction, a stage that needs multi-level tiling or is already tiled, a stage with a cache-write or rfactor
     * stage, an innermost axis that is not a multiple of a vector or that some read does not index at its last
     * position alone.
     */
    static List<Integer> innerSizes(SearchTask task, AccessAnalyzer access, LoopState state, int stageId) {
        Stage st = state.stage(stageId);
        if (st.isPlaceholder() || task.target().kind().isGpu()) return List.of();
        ComputeOp op = st.computeOp();
        if (!op.isReduction()
                || access.needsMultiLevelTiling(op)
                || StagePredicates.isTiled(st)
                || StagePredicates.hasCacheWriteStage(state, stageId)
                || StagePredicates.hasRfactorStage(state, stageId)) return List.of();
        if (st.iters().size() != op.axes().size() + op.reduceAxes().size()) return List.of();
        int nSpace = leadingSpatial(st);
        if (nSpace != op.axes().size() || nSpace == 0) return List.of();
        Var axis = op.axes().getLast();
        var reads = access.readFrom(op);
        if (reads.isEmpty()) return List.of();
        for (List<List<Expr>> accesses : reads.values()) {
            for (List<Expr> idx : accesses) {
                if (idx.isEmpty() || !(idx.getLast() instanceof Var v) || !v.equals(axis)) return List.of();
                for (int d = 0; d < idx.size() - 1; d++) if (Exprs.uses(idx.get(d), axis)) return List.of();
            }
        }
        Long extent = st.iter(nSpace - 1).extent();
        if (extent == null) return List.of();
        int lanes = task.hardware().lanes(op.outputs().getFirst().dtype().bytes());
        List<Integer> out = new ArrayList<>();
        for (int v : VECTORS) {
            long size = (long) v * lanes;
            if (size <= extent && extent % size == 0 && size <= task.hardware().maxInnermostSplitFactor())
                out.add((int) size);
        }
        return out;
    }

    /** The number of spatial loops in front of the stage's first reduction loop. */
    private static int leadingSpatial(Stage st) {
        int n = 0;
        while (n < st.iters().size() && st.iter(n).kind() == IterKind.SPATIAL) n++;
        return n;
    }
}
