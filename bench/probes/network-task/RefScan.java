package dev.kiln.autoschedule.network;
import dev.kiln.autoschedule.measure.Measurers;
import dev.kiln.interp.Interpreter;
import dev.kiln.runtime.NDArray;
import dev.kiln.target.Target;
import java.util.List;
/** For each task: how long the interpreter takes to compute its reference output. */
public class RefScan {
    public static void main(String[] a) throws Exception {
        Target target = Probes.target(Integer.parseInt(a[1]));
        long t0 = System.nanoTime();
        List<NetworkTask> tasks = Probes.tasks(a[0], target);
        System.out.printf("extract %.1f s%n", (System.nanoTime() - t0) / 1e9);
        double sum = 0;
        for (int i = 0; i < tasks.size(); i++) {
            NetworkTask t = tasks.get(i);
            long s = System.nanoTime();
            var ref = Measurers.referenceProgram(t.task());
            NDArray[] args = Probes.randomArgs(ref.params());
            long s2 = System.nanoTime();
            Interpreter.run(ref, args);
            double sec = (System.nanoTime() - s2) / 1e9;
            sum += (System.nanoTime() - s) / 1e9;
            System.out.printf("%2d lower+alloc %.2f s interp %.2f s  gflop %.3f %s%n", i, (s2 - s) / 1e9, sec, t.task().dag().flopCount() / 1e9, t.task().dag().toString().lines().filter(x -> x.contains("=") && !x.contains("placeholder")).reduce((x, y) -> y).orElse("").strip().split(" ")[0]);
        }
        System.out.printf("sum %.1f s%n", sum);
    }
}
