package dev.kiln.autoschedule.gpu;

import dev.kiln.autoschedule.SearchTask;
import dev.kiln.autoschedule.annotate.FactorizationMemo;
import dev.kiln.autoschedule.annotate.InitPopulation;
import dev.kiln.autoschedule.annotate.InitRule;
import dev.kiln.autoschedule.annotate.InitUnroll;
import dev.kiln.autoschedule.sketch.AddCacheWrite;
import dev.kiln.autoschedule.sketch.AlwaysInline;
import dev.kiln.autoschedule.sketch.MultiLevelTiling;
import dev.kiln.autoschedule.sketch.MultiLevelTilingWithFusion;
import dev.kiln.autoschedule.sketch.Sketch;
import dev.kiln.autoschedule.sketch.SketchGenerator;
import dev.kiln.autoschedule.sketch.SketchRule;
import dev.kiln.autoschedule.sketch.SkipStage;
import java.util.List;

/**
 * The GPU rules of the auto-scheduler (ansor-notes §4.2 and §5), for CUDA tasks.
 *
 * <p>Sketch rules, in Ansor's GPU order: {@link AddCacheReadShared}, AlwaysInline (any
 * non-reducing intermediate stage on a GPU), {@link AddCacheWriteForFusion} (Kiln's: a
 * {@code .local} accumulator for a stage about to be fused into its consumer, which TVM gets by
 * scope inference), AddCacheWrite (a {@code .local} accumulator),
 * MultiLevelTilingWithFusion ("SSSRRSRS", the consumer fused at level 3), MultiLevelTiling
 * ("SSSRRSRS"), SkipStage. Left out: <b>CrossThreadReduction</b>, because Kiln's GPU lowering
 * refuses a reduction loop bound to threads (VerifyThreadBindings: several threads would update
 * one element; there is no cross-thread reduction lowering yet), so a small-output reduction
 * keeps its reduction serial in each thread; SpecialComputeLocationGPU and
 * SimplifyComputeWithConstTensor, which act on operator attributes Kiln does not have. So the
 * GPU sketch counts of ansor-notes §4.5 hold where no cross-thread reduction is involved (matmul
 * 512³: 1, conv2d+bn+relu: 1, max_pool2d: 1); where Ansor adds a cross-thread-reduction sketch
 * (matmul 8x8x1024: 2, min: 2, softmax: 4) Kiln has only the others (1, 1, 1); a rank-0 output
 * has no sketch Kiln can bind.
 *
 * <p>Annotation rules after tile filling: {@link InitThreadBind}, InitUnroll with the GPU choices
 * {0, 16, 64, 512, 1024}, and {@link CheckGpuLimits}, which drops samples over the target's
 * thread, vthread or shared-memory limits before they are measured.
 */
public final class GpuRules {
    private GpuRules() {}

    public static List<SketchRule> sketchRules() {
        return List.of(new AddCacheReadShared(), new AlwaysInline(), new AddCacheWriteForFusion(), new AddCacheWrite(),
                new MultiLevelTilingWithFusion(MultiLevelTiling.GPU_STRUCTURE, List.of(3)),
                new MultiLevelTiling(MultiLevelTiling.GPU_STRUCTURE), new SkipStage());
    }

    public static SketchGenerator sketchGenerator() {
        return new SketchGenerator(sketchRules());
    }

    public static List<InitRule> annotationRules() {
        return List.of(new InitThreadBind(), new InitUnroll(InitUnroll.GPU_STEPS), new CheckGpuLimits());
    }

    /** A sampler of the task's GPU sketches with the GPU annotation rules. */
    public static InitPopulation population(SearchTask task, List<Sketch> sketches) {
        return new InitPopulation(task, sketches, annotationRules(), new FactorizationMemo(), InitPopulation.DEFAULT_MAX_FRUITLESS_DRAWS);
    }
}
