package dev.kiln.autoschedule.annotate;

import dev.kiln.schedule.ComputeAtKind;
import dev.kiln.schedule.Iter;
import dev.kiln.schedule.IterAnnotation;
import dev.kiln.schedule.LoopState;
import dev.kiln.schedule.Stage;
import java.util.List;

/**
 * Ansor's CPU pruning of states with nested parallelism: a parallel loop that encloses another
 * parallel loop, of its own stage or of a stage computed inside it.
 */
public final class NestedParallel {
    private NestedParallel() {}

    /** The name under which the sampler counts the states it drops for this. */
    public static final String NAME = "NestedParallel";

    /** Whether some parallel loop of the state runs inside another. */
    public static boolean has(LoopState s) {
        for (int id = 0; id < s.stages().size(); id++) {
            Stage st = s.stages().get(id);
            if (!st.isPlaceholder() && st.computeAt() == ComputeAtKind.ROOT && nested(s, id, false)) return true;
        }
        return false;
    }

    private static boolean nested(LoopState s, int id, boolean inParallel) {
        boolean par = inParallel;
        List<Iter> iters = s.stages().get(id).iters();
        List<Integer> attached = s.attachedTo(id);
        for (Iter it : iters) {
            if (it.annotation() == IterAnnotation.PARALLEL) {
                if (par) return true;
                par = true;
            }
            for (int a : attached) {
                Stage x = s.stages().get(a);
                if (x.computeAt() == ComputeAtKind.ITER && x.attachIter() == it.uid() && nested(s, a, par)) return true;
            }
        }
        return false;
    }
}
