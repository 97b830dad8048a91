package dev.kiln.autoschedule.network;

import dev.kiln.autoschedule.tune.AutoSchedule;
import dev.kiln.graph.Graph;
import dev.kiln.graph.fuse.Partition;
import dev.kiln.lower.Lowering;
import dev.kiln.onnx.OnnxImporter;
import dev.kiln.schedule.Schedule;
import dev.kiln.target.Target;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/** Prints the schedule and lowered program of tasks of an ONNX network: model.onnx log.jsonl threads task... */
public class ShowFunc {
    public static void main(String[] a) throws Exception {
        Graph g = OnnxImporter.load(Path.of(a[0]), Map.of("batch", 1L));
        Target target = Target.cpu().withCores(Integer.parseInt(a[2])).withFastMath(true);
        Partition p = Network.partition(g, target);
        List<NetworkTask> tasks = TaskExtraction.extract(p, target, true);
        for (int i = 3; i < a.length; i++) {
            NetworkTask t = tasks.get(Integer.parseInt(a[i]));
            var best = AutoSchedule.bestProgram(t.task(), Path.of(a[1]));
            WeightLayouts wl = WeightLayouts.of(t, best.schedule());
            System.out.println("== task " + t.id() + " " + t.description() + " tuned " + best.seconds() * 1e3 + " ms");
            System.out.println(wl.schedule().toString());
            System.out.println(Lowering.lower("t" + t.id(), wl.schedule(), target, Lowering.Options.defaults()));
        }
    }
}
