package dev.kiln.autoschedule.network;

import dev.kiln.autoschedule.tune.AutoSchedule;
import dev.kiln.autoschedule.tune.TuneOptions;
import dev.kiln.target.Target;
import java.nio.file.Path;
import java.util.List;

/**
 * Tunes one task of an ONNX network alone: model.onnx task trials log.jsonl [seed]; FMA contraction, 2 threads
 * (-Dthreads=N for another count).
 */
public class TuneTask {
    public static void main(String[] a) throws Exception {
        Target target = Probes.target(Integer.getInteger("threads", 2));
        List<NetworkTask> tasks = Probes.tasks(a[0], target);
        NetworkTask t = tasks.get(Integer.parseInt(a[1]));
        String[] free = t.task().layoutFree().stream().map(i -> t.task().dag().arguments().get(i).name()).toArray(String[]::new);
        var r = AutoSchedule.tune(t.task().dag(), target, TuneOptions.builder().trials(Integer.parseInt(a[2]))
                .logFile(Path.of(a[3])).seed(a.length > 4 ? Long.parseLong(a[4]) : 1).layoutFree(free).build());
        System.out.println("best " + r.seconds() * 1e3 + " ms: " + r.schedule());
    }
}
