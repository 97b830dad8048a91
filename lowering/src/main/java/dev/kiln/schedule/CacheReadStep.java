package dev.kiln.schedule;

import dev.kiln.ir.Expr;
import dev.kiln.ir.IterVar;
import dev.kiln.ir.MemoryScope;
import dev.kiln.ir.Range;
import dev.kiln.te.ComputeOp;
import dev.kiln.te.Tensor;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * {@code CHR}: adds a stage {@code T.scope} right after stage {@code stageId} that copies its
 * tensor T into {@code scope} memory, and makes the given readers read the copy. Computed at a
 * reader's loop, the copy holds just the tile that loop needs (shared-memory tiling on GPUs).
 */
public record CacheReadStep(int stageId, String scope, List<Integer> readerStageIds) implements Step {
    public CacheReadStep {
        readerStageIds = List.copyOf(readerStageIds);
    }

    @Override
    public LoopState applyTo(LoopState s) {
        Stage st = s.stage(stageId);
        MemoryScope memScope = parseScope(scope);
        if (st.op().outputs().size() != 1) {
            throw new ScheduleException("'" + st.name() + "' has several outputs; cache_read needs a single tensor");
        }
        if (readerStageIds.isEmpty()) throw new ScheduleException("cache_read needs at least one reader");
        Tensor t = st.op().output(0);
        List<Integer> direct = s.directConsumers(stageId);
        for (int r : readerStageIds) {
            s.stage(r);
            if (!direct.contains(r)) {
                throw new ScheduleException(
                        "stage '" + s.stages().get(r).name() + "' does not read '" + t.name() + "'");
            }
        }
        List<IterVar> axes = new ArrayList<>();
        for (int d = 0; d < t.rank(); d++) {
            axes.add(new IterVar("ax" + d, Range.of(t.dim(d)), IterVar.Kind.SPATIAL));
        }
        ComputeOp copy =
                ComputeOp.create(t.name() + "." + scope, "cache_read", axes, List.of(t.at(new ArrayList<Expr>(axes))));
        int at = stageId + 1;
        LoopState out = s.insertStage(at, Stage.initial(copy, false, memScope));
        // Readers (shifted by the insertion) read the copy; their own readers follow.
        Set<Integer> readers = new HashSet<>();
        for (int r : readerStageIds) readers.add(r >= at ? r + 1 : r);
        Map<Tensor, Tensor> replaced = new IdentityHashMap<>();
        List<Stage> stages = new ArrayList<>(out.stages());
        for (int i = at + 1; i < stages.size(); i++) {
            if (!(stages.get(i).op() instanceof ComputeOp c)) continue;
            Map<Tensor, Tensor> m = new IdentityHashMap<>(replaced);
            if (readers.contains(i)) m.put(t, copy.output(0));
            if (c.inputTensors().stream().noneMatch(m::containsKey)) continue;
            ComputeOp rebuilt = LoopState.rebuild(c, m);
            for (int v = 0; v < c.outputs().size(); v++) replaced.put(c.output(v), rebuilt.output(v));
            stages.set(i, stages.get(i).withOp(rebuilt));
        }
        return new LoopState(out.dag(), stages, out.steps());
    }

    static MemoryScope parseScope(String scope) {
        try {
            return MemoryScope.valueOf(scope.toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw new ScheduleException("unknown memory scope '" + scope + "'; use global, shared or local");
        }
    }

    @Override
    public String describe(LoopState s) {
        return "cache_read(" + StepChecks.stageName(s, stageId) + ", \"" + scope + "\", readers "
                + readerStageIds.stream().map(r -> StepChecks.stageName(s, r)).toList() + ")";
    }
}
