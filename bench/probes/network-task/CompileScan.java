package dev.kiln.autoschedule.network;
import dev.kiln.autoschedule.tune.AutoSchedule;
import dev.kiln.target.CompiledKernel;
import dev.kiln.target.Target;
import java.nio.file.Path;
import java.util.List;
/** For each task: how long its best program takes to compile, by phase, and its size. */
public class CompileScan {
    public static void main(String[] a) throws Exception {
        Target target = Probes.target(Integer.parseInt(a[2]));
        List<NetworkTask> tasks = Probes.tasks(a[0], target);
        for (int i = 0; i < tasks.size(); i++) {
            NetworkTask t = tasks.get(i);
            try {
                var best = AutoSchedule.bestProgram(t.task(), Path.of(a[1]));
                WeightLayouts wl = WeightLayouts.of(t, best.schedule());
                long t0 = System.nanoTime();
                var f = dev.kiln.autoschedule.measure.ScheduleLowerer.forTarget(target).lower(AutoSchedule.task(wl.schedule().dag(), target), wl.schedule());
                double lowerMs = (System.nanoTime() - t0) / 1e6;
                CompiledKernel k = AutoSchedule.compile(wl.schedule(), target, "scan" + i);
                double ms = (System.nanoTime() - t0) / 1e6 - lowerMs;
                String src = k.source();
                int ir = (int) src.lines().count();
                String times = (k instanceof dev.kiln.jit.LlvmKernel lk) ? lk.compileTimes() : "";
                if (a.length > 3 && Integer.parseInt(a[3]) == i) java.nio.file.Files.writeString(Path.of("/tmp/cs" + i + ".txt"), src);
                System.out.printf("%2d lower %.1f total %.1f ms  lines %6d  %s  %s%n", i, lowerMs, ms, ir, times, t.task().dag().toString().lines().filter(x -> x.contains("=") && !x.contains("placeholder")).reduce((x, y) -> y).orElse("").strip().split(" ")[0]);
            } catch (Exception e) {
                System.out.println(i + " " + e);
            }
        }
    }
}
