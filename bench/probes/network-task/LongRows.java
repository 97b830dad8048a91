package dev.kiln.autoschedule.network;

import dev.kiln.autoschedule.InferBound;
import dev.kiln.autoschedule.annotate.InitVectorization;
import dev.kiln.schedule.LoopState;
import dev.kiln.target.Target;
import java.util.List;

/**
 * Which stages of a network's tasks {@code InitVectorization.longContiguousRow} vectorises (an untiled stage's long
 * row read element by element), read on each task's initial state: {@code LongRows MODEL.onnx}.
 */
public class LongRows {
    public static void main(String[] a) throws Exception {
        Target target = Probes.target(1);
        List<NetworkTask> tasks = Probes.tasks(a[0], target);
        int hit = 0;
        for (int i = 0; i < tasks.size(); i++) {
            var t = tasks.get(i).task();
            LoopState s = InferBound.apply(LoopState.initial(t.dag()));
            for (int id = 0; id < s.stages().size(); id++) {
                if (s.stage(id).isPlaceholder()) continue;
                if (InitVectorization.longContiguousRow(t, s, id)) {
                    hit++;
                    System.out.println("task " + i + " (weight " + tasks.get(i).weight() + "): stage '"
                            + s.stage(id).name() + "' " + s.stage(id).iters());
                }
            }
        }
        System.out.println(tasks.size() + " tasks, " + hit + " stages with a long contiguous row");
    }
}
