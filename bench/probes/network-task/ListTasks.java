package dev.kiln.autoschedule.network;
import dev.kiln.target.Target;
import java.nio.file.Path;
import java.util.List;
public class ListTasks {
    public static void main(String[] a) throws Exception {
        Target target = Probes.target(1);
        List<NetworkTask> tasks = Probes.tasks(a[0], target);
        for (int i = 0; i < tasks.size(); i++) {
            var t = tasks.get(i);
            String s = t.task().dag().toString().replace('\n', ' ');
            System.out.println(i + " w=" + t.weight() + " " + s.substring(0, Math.min(Integer.getInteger("width", 220), s.length())));
        }
    }
}
