package dev.kiln.autoschedule.network;
import dev.kiln.graph.Graph;
import dev.kiln.onnx.OnnxImporter;
import dev.kiln.target.Target;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
public class ListTasks {
    public static void main(String[] a) throws Exception {
        Graph g = OnnxImporter.load(Path.of(a[0]), Map.of("batch", 1L));
        Target target = Target.cpu().withCores(1).withFastMath(true);
        List<NetworkTask> tasks = TaskExtraction.extract(Network.partition(g), target, true);
        for (int i = 0; i < tasks.size(); i++) {
            var t = tasks.get(i);
            String s = t.task().dag().toString().replace('\n', ' ');
            System.out.println(i + " w=" + t.weight() + " " + s.substring(0, Math.min(220, s.length())));
        }
    }
}
