package dev.kiln.autoschedule.gpu;

import dev.kiln.schedule.IterKind;
import dev.kiln.schedule.LoopState;
import dev.kiln.schedule.SplitStep;
import dev.kiln.schedule.Step;
import java.util.ArrayList;
import java.util.List;

/**
 * Which split steps of a state's history split which stage: steps name stages by index, and
 * cache stages inserted later shift the indices, so the history is replayed from the DAG and each
 * split step is matched with the name of the stage it applied to.
 */
final class SplitHistory {
    private SplitHistory() {}

    /** The ids of the split steps on spatial loops of the stage named {@code stage}, in history order. */
    static List<Integer> spatialSplits(LoopState s, String stage) {
        List<Integer> out = new ArrayList<>();
        LoopState t = LoopState.initial(s.dag());
        List<Step> steps = s.steps();
        for (int i = 0; i < steps.size(); i++) {
            Step step = steps.get(i);
            if (step instanceof SplitStep sp
                    && t.stage(sp.stageId()).name().equals(stage)
                    && t.stage(sp.stageId()).iter(sp.iterId()).kind() == IterKind.SPATIAL) {
                out.add(i);
            }
            t = t.apply(step);
        }
        return out;
    }
}
