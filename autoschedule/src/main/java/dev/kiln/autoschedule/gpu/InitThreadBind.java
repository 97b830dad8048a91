package dev.kiln.autoschedule.gpu;

import dev.kiln.autoschedule.InferBound;
import dev.kiln.autoschedule.SearchTask;
import dev.kiln.autoschedule.analysis.AccessAnalyzer;
import dev.kiln.autoschedule.annotate.InitRule;
import dev.kiln.autoschedule.annotate.InvalidSample;
import dev.kiln.ir.KilnException;
import dev.kiln.schedule.AnnotationStep;
import dev.kiln.schedule.ComputeAtKind;
import dev.kiln.schedule.FollowFusedSplitStep;
import dev.kiln.schedule.FuseStep;
import dev.kiln.schedule.Iter;
import dev.kiln.schedule.IterAnnotation;
import dev.kiln.schedule.IterKind;
import dev.kiln.schedule.LoopState;
import dev.kiln.schedule.SplitStep;
import dev.kiln.schedule.Stage;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/**
 * Ansor's InitThreadBind: binds the loops of a concrete GPU state to blocks and threads. After
 * bound inference, for each stage from last to first (inlined stages and inputs skipped):
 * <ul>
 *   <li>a stage with a loop bound to threadIdx.x already is left alone;
 *   <li>the root of multi-level tiling (the stage a tiled stage is computed at, or the tiled stage
 *       itself at root): its leading {@code *.0} loops are fused and bound to blockIdx.x, the next
 *       {@code *.1} loops to vthread (invalid above the vthread limit), the next {@code *.2} loops
 *       to threadIdx.x (invalid below a warp, unless the whole stage has at most two warps of
 *       points);
 *   <li>another stage at root: its outer spatial loops (up to a reduction loop, an annotated loop
 *       or a loop other stages are computed at) are fused; at most a warp of points is bound to
 *       threadIdx.x, more are split by the warp size into blockIdx.x and threadIdx.x;
 *   <li>a {@code .shared} stage computed inside another (a cooperative fetch): all its loops are
 *       fused and split by a vector length drawn from {1, 2, 4} (the inner part vectorized when
 *       longer than 1), and the outer part is split, with a follow-fused-split of the tiled
 *       stage's threadIdx tile sizes, by the block's thread count, the inner part bound to
 *       threadIdx.x: every thread of the block fetches.
 * </ul>
 * A stage with no spatial loop at root (a rank-0 result) cannot be bound without a cross-thread
 * reduction, which Kiln does not lower: the sample is invalid, with that reason.
 */
public record InitThreadBind() implements InitRule {
    public static final String NAME = "InitThreadBind";

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public LoopState apply(SearchTask task, LoopState state, SplittableRandom rng) {
        try {
            LoopState s = InferBound.apply(state);
            AccessAnalyzer access = AccessAnalyzer.of(s);
            int warp = task.hardware().warpSize();
            for (int id = s.stages().size() - 1; id >= 0; id--) {
                Stage st = s.stage(id);
                if (st.isPlaceholder() || st.computeAt() == ComputeAtKind.INLINED) continue;
                if (hasThreadX(st)) continue;
                if (st.computeAt() == ComputeAtKind.ROOT) {
                    s = isTilingRoot(access, s, id) ? bindTilingRoot(task, s, id) : bindRoot(s, id, warp);
                } else if (st.name().endsWith(".shared")) {
                    s = bindFetch(s, id, rng);
                }
            }
            return s;
        } catch (InvalidSample e) {
            throw e;
        } catch (KilnException e) {
            throw new InvalidSample(NAME, e.getMessage());
        }
    }

    private static boolean hasThreadX(Stage st) {
        for (Iter it : st.iters()) if (it.annotation() == IterAnnotation.THREAD_X) return true;
        return false;
    }

    /**
     * Whether multi-level tiling put its spatial levels on this root stage: it is tiled so, or a tiled stage is
     * computed at it.
     */
    private static boolean isTilingRoot(AccessAnalyzer access, LoopState s, int id) {
        if (leading(s.stage(id), 0, ".0") > 0
                && access.needsMultiLevelTiling(s.stage(id).op())) return true;
        for (int a : s.attachedTo(id))
            if (access.needsMultiLevelTiling(s.stage(a).op())) return leading(s.stage(id), 0, ".0") > 0;
        return false;
    }

    /** How many loops from {@code from} on have names ending in {@code suffix}. */
    private static int leading(Stage st, int from, String suffix) {
        int n = 0;
        List<Iter> its = st.iters();
        while (from + n < its.size()
                && its.get(from + n).kind() == IterKind.SPATIAL
                && its.get(from + n).name().endsWith(suffix)) n++;
        return n;
    }

    private LoopState bindTilingRoot(SearchTask task, LoopState s, int id) {
        String name = s.stage(id).name();
        int blocks = leading(s.stage(id), 0, ".0");
        s = fuseAndBind(s, id, 0, blocks, IterAnnotation.BLOCK_X);
        int vthreads = leading(s.stage(id), 1, ".1");
        if (vthreads == 0)
            throw new InvalidSample(NAME, "stage '" + name + "' has no .1 tile level to bind to vthread");
        s = fuseAndBind(s, id, 1, vthreads, IterAnnotation.VTHREAD);
        long vext = s.stage(id).iter(1).extent();
        int maxV = task.hardware().maxVthreadExtent() > 0 ? task.hardware().maxVthreadExtent() : 8;
        if (vext > maxV) {
            throw new InvalidSample(
                    NAME, "stage '" + name + "': vthread extent " + vext + " is above the limit " + maxV);
        }
        int threads = leading(s.stage(id), 2, ".2");
        if (threads == 0)
            throw new InvalidSample(NAME, "stage '" + name + "' has no .2 tile level to bind to threadIdx.x");
        s = fuseAndBind(s, id, 2, threads, IterAnnotation.THREAD_X);
        long text = s.stage(id).iter(2).extent();
        int warp = task.hardware().warpSize();
        if (text < warp && spatialPoints(s.stage(id)) > 2L * warp) {
            throw new InvalidSample(
                    NAME, "stage '" + name + "': " + text + " threads per block, fewer than a warp (" + warp + ")");
        }
        return s;
    }

    private static long spatialPoints(Stage st) {
        long n = 1;
        for (Iter it : st.iters()) if (it.kind() == IterKind.SPATIAL) n = Math.multiplyExact(n, it.extent());
        return n;
    }

    private LoopState bindRoot(LoopState s, int id, int warp) {
        Stage st = s.stage(id);
        int n = 0;
        List<Iter> its = st.iters();
        while (n < its.size()
                && its.get(n).kind() == IterKind.SPATIAL
                && its.get(n).annotation() == IterAnnotation.NONE) {
            n++;
            if (!s.attachedTo(id).isEmpty() && attachedAt(s, id, its.get(n - 1))) break;
        }
        if (n == 0) {
            throw new InvalidSample(
                    NAME,
                    "stage '" + st.name() + "' has no spatial loop to bind to GPU threads (a rank-0 result"
                            + " needs a cross-thread reduction, which Kiln does not lower)");
        }
        if (n > 1) s = s.apply(new FuseStep(id, range(0, n)));
        long extent = s.stage(id).iter(0).extent();
        if (extent <= warp) return s.apply(new AnnotationStep(id, 0, IterAnnotation.THREAD_X));
        s = s.apply(new SplitStep(id, 0, extent, List.of(warp), true));
        s = s.apply(new AnnotationStep(id, 0, IterAnnotation.BLOCK_X));
        return s.apply(new AnnotationStep(id, 1, IterAnnotation.THREAD_X));
    }

    private static boolean attachedAt(LoopState s, int id, Iter it) {
        for (int a : s.attachedTo(id)) if (s.stage(a).attachIter() == it.uid()) return true;
        return false;
    }

    private LoopState bindFetch(LoopState s, int id, SplittableRandom rng) {
        Stage st = s.stage(id);
        Stage reader = s.stage(st.attachStage());
        List<Integer> splits = SplitHistory.spatialSplits(s, reader.name());
        if (splits.isEmpty())
            throw new InvalidSample(NAME, "fetch '" + st.name() + "': its reader '" + reader.name() + "' is not tiled");
        int n = st.iters().size();
        if (n > 1) s = s.apply(new FuseStep(id, range(0, n)));
        long extent = s.stage(id).iter(0).extent();
        int[] lanes = {1, 2, 4};
        int v = lanes[rng.nextInt(lanes.length)];
        int outer = 0;
        if (v > 1 && extent % v == 0) {
            s = s.apply(new SplitStep(id, 0, extent, List.of(v), true));
            s = s.apply(new AnnotationStep(id, 1, IterAnnotation.VECTORIZE));
        }
        // threadIdx level of "SSSRRSRS" is level 1 of the spatial splits' lengths (after vthread)
        s = s.apply(new FollowFusedSplitStep(id, outer, splits, 1, true));
        return s.apply(new AnnotationStep(id, outer + 1, IterAnnotation.THREAD_X));
    }

    private LoopState fuseAndBind(LoopState s, int id, int from, int count, IterAnnotation a) {
        if (count > 1) s = s.apply(new FuseStep(id, range(from, from + count)));
        return s.apply(new AnnotationStep(id, from, a));
    }

    private static List<Integer> range(int from, int to) {
        List<Integer> out = new ArrayList<>();
        for (int i = from; i < to; i++) out.add(i);
        return out;
    }
}
