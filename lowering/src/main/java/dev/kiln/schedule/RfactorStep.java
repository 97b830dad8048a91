package dev.kiln.schedule;

import dev.kiln.ir.Expr;
import dev.kiln.ir.Exprs;
import dev.kiln.ir.IntImm;
import dev.kiln.ir.IterVar;
import dev.kiln.ir.Range;
import dev.kiln.ir.Reduce;
import dev.kiln.ir.Var;
import dev.kiln.te.ComputeOp;
import dev.kiln.te.Tensor;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

/**
 * {@code RF}: factors a reduction. Reduction loop {@code iterId} (usually one part of a split
 * reduction) becomes a spatial axis of a new stage {@code C.rf} inserted at {@code stageId},
 * placed at position {@code factorIterId} among its spatial axes, which reduces over the other
 * reduction loops; the original stage (now at {@code stageId + 1}) reduces {@code C.rf} over that
 * axis. The partial reductions can then run in parallel or in vector lanes. The stage's spatial
 * loops must be untouched, its reduction loops split (or fused) into at least two, and their
 * sizes decided.
 */
public record RfactorStep(int stageId, int iterId, int factorIterId) implements Step {

    @Override
    public LoopState applyTo(LoopState s) {
        Stage st = StepChecks.computeStage(s, stageId);
        Iter x = StepChecks.loop(st, iterId);
        ComputeOp c = st.computeOp();
        if (!c.isReduction()) throw new ScheduleException("'" + st.name() + "' is not a reduction");
        if (x.kind() != IterKind.REDUCE) {
            throw new ScheduleException(
                    "loop '" + x.name() + "' is not a reduction loop; rfactor factors a reduction loop");
        }
        int nSpatial = c.axes().size();
        if (factorIterId < 0 || factorIterId > nSpatial) {
            throw new ScheduleException("factor axis position " + factorIterId + " is outside 0.." + nSpatial);
        }
        for (int uid = 0; uid < nSpatial; uid++) {
            final int u = uid;
            if (st.relations().stream().anyMatch(r -> involves(r, u))) {
                throw new ScheduleException("spatial loop '" + st.all().get(uid).name()
                        + "' has been split or fused; rfactor before transforming spatial loops");
            }
        }
        if (!s.attachedTo(stageId).isEmpty()) {
            throw new ScheduleException("stages are computed inside '" + st.name() + "'; rfactor it first");
        }
        List<Iter> rest = new ArrayList<>();
        for (Iter it : st.iters()) {
            if (it.kind() == IterKind.MIXED) {
                throw new ScheduleException("loop '" + it.name() + "' mixes spatial and reduction loops");
            }
            if (it.kind() == IterKind.REDUCE && it.uid() != x.uid()) rest.add(it);
        }
        if (rest.isEmpty()) {
            throw new ScheduleException("'" + x.name() + "' is the only reduction loop; split the reduction first");
        }
        for (Iter it : st.all()) {
            if (it.extent() == null) throw new ScheduleException("loop '" + it.name() + "' has an undecided extent");
        }

        // The factored stage: spatial axes with x inserted, reducing over the rest.
        List<IterVar> spatial = new ArrayList<>();
        for (IterVar a : c.axes()) spatial.add(new IterVar(a.name(), a.dom(), IterVar.Kind.SPATIAL));
        IterVar factorAxis = new IterVar(x.name(), Range.of(x.extent()), IterVar.Kind.SPATIAL);
        List<IterVar> rfAxes = new ArrayList<>(spatial);
        rfAxes.add(factorIterId, factorAxis);
        List<IterVar> rfReduce = new ArrayList<>();
        Map<Integer, Expr> leafValues = new HashMap<>();
        for (int uid = 0; uid < nSpatial; uid++) leafValues.put(uid, spatial.get(uid));
        leafValues.put(x.uid(), factorAxis);
        for (Iter it : rest) {
            IterVar r = new IterVar(it.name(), Range.of(it.extent()), IterVar.Kind.REDUCE);
            rfReduce.add(r);
            leafValues.put(it.uid(), r);
        }
        Map<Integer, Long> extents = IterAlgebra.recordedExtents(st);
        Map<Integer, Expr> values = IterAlgebra.values(st, leafValues, extents);
        Map<Var, Expr> subst = new IdentityHashMap<>();
        for (int d = 0; d < nSpatial; d++) subst.put(c.axes().get(d), spatial.get(d));
        List<IterVar> origReduce = c.reduceAxes();
        for (int d = 0; d < origReduce.size(); d++) {
            IterVar r = origReduce.get(d);
            Expr off = values.get(nSpatial + d);
            subst.put(
                    r,
                    r.dom().min() instanceof IntImm m && m.value() == 0
                            ? off
                            : off.add(r.dom().min()));
        }
        Reduce red = (Reduce) c.body();
        Expr cond = Exprs.substitute(red.condition(), subst);
        for (Expr g : IterAlgebra.guards(st, values, extents))
            cond = cond instanceof IntImm t && t.value() == 1 ? g : cond.and(g);
        List<Expr> sources =
                red.sources().stream().map(e -> Exprs.substitute(e, subst)).toList();
        ComputeOp rf = ComputeOp.create(
                c.name() + ".rf", c.tag(), rfAxes, red.reducer().reduce(sources, rfReduce, cond));

        // The original stage reduces the partial results over the factor axis.
        List<IterVar> axes = new ArrayList<>();
        for (IterVar a : c.axes()) axes.add(new IterVar(a.name(), a.dom(), IterVar.Kind.SPATIAL));
        IterVar kr = new IterVar(x.name(), Range.of(x.extent()), IterVar.Kind.REDUCE);
        List<Expr> idx = new ArrayList<>(axes);
        idx.add(factorIterId, kr);
        List<Expr> partials = new ArrayList<>();
        for (Tensor t : rf.outputs()) partials.add(t.at(idx));
        ComputeOp fin = ComputeOp.create(
                c.name(), c.tag(), axes, red.reducer().reduce(partials, List.of(kr), IntImm.bool(true)));

        LoopState out = s.insertStage(stageId, Stage.initial(rf, false));
        Stage shifted = out.stages().get(stageId + 1);
        out = out.withStage(
                stageId + 1,
                Stage.initial(fin, st.output(), st.scope())
                        .withComputeAt(shifted.computeAt(), shifted.attachStage(), shifted.attachIter()));
        Map<Tensor, Tensor> replaced = new IdentityHashMap<>();
        for (int v = 0; v < c.outputs().size(); v++) replaced.put(c.output(v), fin.output(v));
        return out.replaceReads(replaced, stageId + 2, java.util.Set.of());
    }

    private static boolean involves(IterRelation r, int uid) {
        return switch (r) {
            case IterRelation.Split sp -> sp.parent() == uid;
            case IterRelation.Fuse fu -> fu.parents().contains(uid);
        };
    }

    @Override
    public String describe(LoopState s) {
        return "rfactor(" + StepChecks.loopName(s, stageId, iterId) + ", at " + factorIterId + ")";
    }
}
