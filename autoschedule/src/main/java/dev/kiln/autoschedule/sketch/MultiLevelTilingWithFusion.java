package dev.kiln.autoschedule.sketch;

import dev.kiln.autoschedule.SearchTask;
import dev.kiln.autoschedule.analysis.AccessAnalyzer;
import dev.kiln.autoschedule.analysis.StagePredicates;
import dev.kiln.schedule.ComputeAtStep;
import dev.kiln.schedule.Iter;
import dev.kiln.schedule.IterKind;
import dev.kiln.schedule.LoopState;
import dev.kiln.schedule.Stage;
import java.util.ArrayList;
import java.util.List;

/**
 * Tiles a stage with data reuse in several levels and fuses it into its single element-wise
 * consumer: the consumer is tiled like the stage's outer {@code level} spatial levels and the
 * stage is computed at the last loop of the consumer's level {@code level - 1}. One sketch per
 * fusion level ({1, 2} on a CPU, {3} on a GPU; a level is used only if the structure has an 'S'
 * there). A stage that has a cache-write stage (or any stage on a GPU), and in Kiln's CPU rule a stage that
 * reads an input without reuse, gets only these sketches; otherwise the rules after this one are tried too.
 */
public record MultiLevelTilingWithFusion(String structure, List<Integer> levels, boolean fuseReadsWithoutReuse)
        implements SketchRule {
    public MultiLevelTilingWithFusion {
        levels = List.copyOf(levels);
    }

    /** Ansor's rule with this structure and these fusion levels. */
    public MultiLevelTilingWithFusion(String structure, List<Integer> levels) {
        this(structure, levels, false);
    }

    /**
     * Kiln's CPU rule: Ansor's (structure "SSRSRS", fusion at levels 1 and 2), and a stage that reads an input
     * without reuse ({@link StagePredicates#readsAnInputWithoutReuse}: a depthwise conv) gets only the fused
     * sketches. Unfused, such a stage writes its whole result into a heap temporary and its element-wise consumer
     * reads it back in a second pass: for a depthwise conv as much memory traffic as the conv itself, on a temporary
     * the tuner's repeats keep warm and a network meets cold (MobileNet-V2 at 1 thread, docs/PERFORMANCE.md).
     */
    public static MultiLevelTilingWithFusion cpu() {
        return new MultiLevelTilingWithFusion(MultiLevelTiling.CPU_STRUCTURE, List.of(1, 2), true);
    }

    /** Ansor's CPU rule alone: structure "SSRSRS", fusion at levels 1 and 2. */
    public static MultiLevelTilingWithFusion ansorCpu() {
        return new MultiLevelTilingWithFusion(MultiLevelTiling.CPU_STRUCTURE, List.of(1, 2), false);
    }

    @Override
    public String name() {
        return "MultiLevelTilingWithFusion";
    }

    @Override
    public Condition condition(SearchTask task, AccessAnalyzer access, LoopState state, int stageId) {
        if (!StagePredicates.needsMultiLevelTiling(access, state, stageId)) return Condition.SKIP;
        int target = StagePredicates.singleElementwiseMatchedConsumer(access, state, stageId);
        if (target < 0 || !followable(state, stageId, target)) return Condition.SKIP;
        return StagePredicates.hasCacheWriteStage(state, stageId)
                        || task.target().kind().isGpu()
                        || (fuseReadsWithoutReuse && StagePredicates.readsAnInputWithoutReuse(access, state, stageId))
                ? Condition.APPLY_AND_SKIP_REST
                : Condition.APPLY;
    }

    /**
     * Follow tiling needs one untouched spatial loop in the consumer per spatial loop of the
     * stage. Ansor assumes it (its code aborts otherwise, e.g. for a reducing consumer of a
     * non-reducing stage); Kiln does not apply the rule then.
     */
    static boolean followable(LoopState s, int stageId, int target) {
        Stage t = s.stage(target);
        long spatial = s.stage(stageId).iters().stream()
                .filter(it -> it.kind() == IterKind.SPATIAL)
                .count();
        if (spatial == 0 || StagePredicates.isTiled(t) || t.iters().size() != spatial) return false;
        for (Iter it : t.iters()) if (it.kind() != IterKind.SPATIAL) return false;
        return true;
    }

    @Override
    public List<Derivation> apply(SearchTask task, AccessAnalyzer access, LoopState state, int stageId) {
        int target = StagePredicates.singleElementwiseMatchedConsumer(access, state, stageId);
        MultiLevelTilingSupport.Tiled base = MultiLevelTilingSupport.multiLevelTiling(state, stageId, structure);
        int nSplits = base.spatialSplitSteps().size();
        List<Derivation> out = new ArrayList<>();
        for (int level : levels) {
            if (level < 1 || level > structure.length() || Character.toLowerCase(structure.charAt(level - 1)) != 's')
                continue;
            LoopState t = MultiLevelTilingSupport.followTiling(base.state(), target, base.spatialSplitSteps(), level);
            t = t.apply(new ComputeAtStep(stageId, target, level * nSplits - 1));
            out.add(new Derivation(t, stageId - 1));
        }
        return out;
    }
}
