package dev.kiln.autoschedule.annotate;

import dev.kiln.autoschedule.SearchTask;
import dev.kiln.autoschedule.analysis.StagePredicates;
import dev.kiln.ir.KilnException;
import dev.kiln.schedule.AnnotationStep;
import dev.kiln.schedule.ComputeAtKind;
import dev.kiln.schedule.FuseStep;
import dev.kiln.schedule.Iter;
import dev.kiln.schedule.IterAnnotation;
import dev.kiln.schedule.IterKind;
import dev.kiln.schedule.LoopState;
import dev.kiln.schedule.Stage;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/**
 * Makes the outer loops of every root stage parallel (Ansor's InitParallel; no random choice).
 * From the outermost loop inwards, loops are collected until a reduction or annotated loop, until
 * the product of their extents exceeds 16 × cores, or up to and including a loop that has stages
 * computed inside it; they are fused and marked parallel. If the collected loops all have extent
 * 1 and the walk stopped at a loop with attached stages, those stages are parallelised the same
 * way and the walk goes on after that loop.
 */
public record InitParallel() implements InitRule {
    public static final String NAME = "InitParallel";

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public LoopState apply(SearchTask task, LoopState state, SplittableRandom rng) {
        LoopState s = state;
        long enough = 16L * task.hardware().numCores();
        try {
            for (int id = 0; id < s.stages().size(); id++) {
                Stage st = s.stage(id);
                if (st.isPlaceholder() || st.computeAt() != ComputeAtKind.ROOT) continue;
                s = annotate(s, id, 0, enough);
            }
            return s;
        } catch (KilnException e) {
            throw new InvalidSample(NAME, e.getMessage());
        }
    }

    private static LoopState annotate(LoopState s, int id, int offset, long enough) {
        List<Iter> iters = s.stage(id).iters();
        List<Integer> toFuse = new ArrayList<>();
        long degree = 1;
        int at = offset;
        for (; at < iters.size(); at++) {
            Iter it = iters.get(at);
            if (it.kind() == IterKind.REDUCE || it.annotation() != IterAnnotation.NONE) break;
            toFuse.add(at);
            degree *= extent(it);
            if (degree > enough) break;
            if (StagePredicates.hasAttached(s, id, it)) break;
        }
        if (degree == 1) {
            if (at < iters.size() && StagePredicates.hasAttached(s, id, iters.get(at))) {
                Iter loop = iters.get(at);
                for (int a : s.attachedTo(id)) {
                    if (s.stage(a).attachIter() == loop.uid()) s = annotate(s, a, 0, enough);
                }
                s = annotate(s, id, at + 1, enough);
            }
            return s;
        }
        if (toFuse.size() > 1) s = s.apply(new FuseStep(id, toFuse));
        return s.apply(new AnnotationStep(id, toFuse.get(0), IterAnnotation.PARALLEL));
    }

    /** Ansor counts an unknown extent as -1, which stops nothing; so does this. */
    static long extent(Iter it) {
        return it.extent() == null ? -1 : it.extent();
    }
}
