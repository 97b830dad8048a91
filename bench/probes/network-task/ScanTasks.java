package dev.kiln.autoschedule.network;
import dev.kiln.autoschedule.tune.AutoSchedule;
import dev.kiln.target.CompiledKernel;
import dev.kiln.target.Target;
import java.nio.file.Path;
import java.util.List;
/** For each task: the best program's assembly: sign extensions, gathers, and instructions per FMA. */
public class ScanTasks {
    public static void main(String[] a) throws Exception {
        Target target = Probes.target(Integer.parseInt(a[2]));
        List<NetworkTask> tasks = Probes.tasks(a[0], target);
        for (int i = 0; i < tasks.size(); i++) {
            NetworkTask t = tasks.get(i);
            try {
                var best = AutoSchedule.bestProgram(t.task(), Path.of(a[1]));
                WeightLayouts wl = WeightLayouts.of(t, best.schedule());
                CompiledKernel k = AutoSchedule.compile(wl.schedule(), target, "scan" + i);
                String src = k.source();
                String asm = src.substring(Math.max(0, src.indexOf("; ---- assembly")));
                if (a.length > 3 && Integer.parseInt(a[3]) == i) java.nio.file.Files.writeString(Path.of("/tmp/scan" + i + ".asm"), src);
                int sx = 0, fma = 0, gather = 0, lines = 0;
                for (String l : asm.split("\n")) {
                    String s = l.strip();
                    if (s.isEmpty() || s.startsWith(".") || s.startsWith("#") || s.endsWith(":") || s.startsWith(";")) continue;
                    lines++;
                    if (s.startsWith("movslq") || s.startsWith("cltq") || s.startsWith("movsxd")) sx++;
                    if (s.startsWith("vfmadd")) fma++;
                    if (s.startsWith("vgather") || s.startsWith("vpgather")) gather++;
                }
                System.out.printf("%2d w=%d %.4f ms  instrs %5d fma %4d movslq %3d gathers %d  %s%n", i, t.weight(), best.seconds() * 1e3, lines, fma, sx, gather, t.task().dag().toString().lines().filter(x -> x.contains("=") && !x.contains("placeholder")).reduce((x, y) -> y).orElse("").strip().split(" ")[0]);
            } catch (Exception e) {
                System.out.println(i + " " + e);
            }
        }
    }
}
