package dev.kiln.schedule;

import dev.kiln.ir.Expr;
import dev.kiln.ir.IterVar;
import dev.kiln.ir.MemoryScope;
import dev.kiln.te.ComputeOp;
import dev.kiln.te.Tensor;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

/**
 * {@code CHW}: the stage's computation moves to a new stage {@code C.scope} inserted at
 * {@code stageId}; the original stage (now at {@code stageId + 1}) copies the result out. With the
 * new stage computed inside the copy's tiles, the accumulator lives in a small local buffer.
 * The stage must not have been transformed yet.
 */
public record CacheWriteStep(int stageId, String scope) implements Step {

    @Override
    public LoopState applyTo(LoopState s) {
        Stage st = StepChecks.computeStage(s, stageId);
        MemoryScope memScope = CacheReadStep.parseScope(scope);
        if (st.isTiled()
                || !st.leaves()
                        .equals(java.util.stream.IntStream.range(0, st.numRoots())
                                .boxed()
                                .toList())) {
            throw new ScheduleException(
                    "'" + st.name() + "' has already been split, fused or reordered; cache_write it first");
        }
        if (!s.attachedTo(stageId).isEmpty()) {
            throw new ScheduleException("stages are computed inside '" + st.name() + "'; cache_write it first");
        }
        if (st.computeAt() == ComputeAtKind.INLINED) throw new ScheduleException("'" + st.name() + "' is inlined");
        ComputeOp c = st.computeOp();
        ComputeOp cache = ComputeOp.create(c.name() + "." + scope, c.tag(), c.axes(), c.bodies());
        List<IterVar> axes = new ArrayList<>();
        for (IterVar a : c.axes()) axes.add(new IterVar(a.name(), a.dom(), IterVar.Kind.SPATIAL));
        List<Expr> copies = new ArrayList<>();
        for (Tensor t : cache.outputs()) copies.add(t.at(new ArrayList<Expr>(axes)));
        ComputeOp copy = ComputeOp.create(c.name(), c.tag(), axes, copies);
        LoopState out = s.insertStage(stageId, Stage.initial(cache, false, memScope));
        Stage shifted = out.stages().get(stageId + 1);
        out = out.withStage(
                stageId + 1,
                Stage.initial(copy, st.output(), st.scope())
                        .withComputeAt(shifted.computeAt(), shifted.attachStage(), shifted.attachIter()));
        Map<Tensor, Tensor> replaced = new IdentityHashMap<>();
        for (int v = 0; v < c.outputs().size(); v++) replaced.put(c.output(v), copy.output(v));
        return out.replaceReads(replaced, stageId + 2, java.util.Set.of());
    }

    @Override
    public String describe(LoopState s) {
        return "cache_write(" + StepChecks.stageName(s, stageId) + ", \"" + scope + "\")";
    }
}
