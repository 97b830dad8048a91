package dev.kiln.autoschedule;

import dev.kiln.schedule.Iter;
import dev.kiln.schedule.LoopState;
import dev.kiln.schedule.ScheduleLowering;
import dev.kiln.schedule.Stage;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Ansor's InferBound for the search: the same loop state, with the loops of every stage carrying
 * the extents lowering will give them. A stage computed inside another stage's loop covers only
 * the region needed there, so its outer tiles often become loops of extent 1. Steps applied to
 * the result (fuse, annotate) see those extents, as Ansor's rules do after InferBound; the
 * step list is unchanged, so replaying it on the DAG gives the state before inference.
 */
public final class InferBound {
    private InferBound() {}

    /** The state with inferred loop extents; throws if the state is not concrete or its bounds cannot be inferred. */
    public static LoopState apply(LoopState s) {
        List<Map<Integer, Long>> extents = ScheduleLowering.inferExtents(s);
        List<Stage> stages = new ArrayList<>();
        for (int i = 0; i < s.stages().size(); i++) {
            Stage st = s.stages().get(i);
            Map<Integer, Long> m = extents.get(i);
            if (m == null) {
                stages.add(st);
                continue;
            }
            List<Iter> all = new ArrayList<>();
            for (Iter it : st.all()) {
                Long e = m.get(it.uid());
                all.add(
                        e == null || e.equals(it.extent())
                                ? it
                                : new Iter(it.uid(), it.name(), e, it.kind(), it.annotation()));
            }
            stages.add(new Stage(
                    st.op(),
                    st.output(),
                    st.numRoots(),
                    all,
                    st.leaves(),
                    st.relations(),
                    st.computeAt(),
                    st.attachStage(),
                    st.attachIter(),
                    st.autoUnrollMaxStep(),
                    st.storageAlign(),
                    st.storageBlock(),
                    st.scope(),
                    st.tensorized()));
        }
        return new LoopState(s.dag(), stages, s.steps());
    }
}
