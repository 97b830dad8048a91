package dev.kiln.schedule;

import dev.kiln.ir.KilnException;
import dev.kiln.te.ComputeDAG;
import java.util.ArrayList;
import java.util.List;

/**
 * The plainest GPU schedule of a computation: every stage is its own kernel, its spatial loops
 * fused and split by a block size, the outer part bound to blockIdx.x and the inner to
 * threadIdx.x (a stage with at most that many points runs as one block). Reduction loops stay
 * serial inside each thread. It is correct for every operator whose stages have at least one
 * spatial axis, and slow; it serves as a baseline, as the schedule of tests that check code
 * generation on the whole operator library, and to run a computation on a GPU without tuning.
 */
public final class SimpleGpuSchedule {
    private SimpleGpuSchedule() {}

    /** The schedule with {@code threads} threads per block. */
    public static Schedule of(ComputeDAG dag, int threads) {
        if (threads < 1) throw new KilnException("a GPU block needs at least one thread, got " + threads);
        LoopState s = LoopState.initial(dag);
        for (int id = 0; id < s.stages().size(); id++) {
            Stage stage = s.stage(id);
            if (stage.isPlaceholder()) continue;
            List<Iter> iters = stage.iters();
            List<Integer> spatial = new ArrayList<>();
            long extent = 1;
            for (int i = 0; i < iters.size() && iters.get(i).kind() == IterKind.SPATIAL; i++) {
                spatial.add(i);
                extent = Math.multiplyExact(extent, iters.get(i).extent());
            }
            if (spatial.isEmpty()) {
                throw new KilnException(
                        "stage '" + stage.name() + "' has no spatial loop (a rank-0 result): binding it to GPU"
                                + " threads needs a cross-thread reduction, which Kiln does not lower; keep a "
                                + "dimension of extent 1");
            }
            if (spatial.size() > 1) s = s.apply(new FuseStep(id, spatial));
            if (extent <= threads) {
                s = s.apply(new AnnotationStep(id, 0, IterAnnotation.THREAD_X));
            } else {
                s = s.apply(new SplitStep(id, 0, extent, List.of(threads), true));
                s = s.apply(new AnnotationStep(id, 0, IterAnnotation.BLOCK_X));
                s = s.apply(new AnnotationStep(id, 1, IterAnnotation.THREAD_X));
            }
        }
        return new Schedule(dag, s.steps());
    }
}
