package dev.kiln.autoschedule.network;

import dev.kiln.autoschedule.tune.AutoSchedule;
import dev.kiln.runtime.NDArray;
import dev.kiln.target.Backend;
import dev.kiln.target.CacheEviction;
import dev.kiln.target.CompiledKernel;
import dev.kiln.target.Target;
import java.nio.file.Path;
import java.util.Arrays;

/**
 * model log threads task...: each task's log best, medians of 200 calls, three rounds: warm; its weights (the
 * arguments between the first and the last) evicted; its first argument (the activation) evicted; its output evicted;
 * everything evicted. What cold weights cost a kernel, against what cold activations cost it.
 */
public class WeightCold {
    public static void main(String[] a) throws Exception {
        Target target = Probes.target(Integer.parseInt(a[2]));
        var tasks = Probes.tasks(a[0], target);
        CacheEviction ev = Backend.forTarget(target).cacheEviction(target).orElseThrow();
        for (int ti = 3; ti < a.length; ti++) {
            NetworkTask t = tasks.get(Integer.parseInt(a[ti]));
            var best = AutoSchedule.bestProgram(t.task(), Path.of(a[1]));
            WeightLayouts wl = WeightLayouts.of(t, best.schedule());
            CompiledKernel k = AutoSchedule.compile(wl.schedule(), target, "probe");
            NDArray[] args = Probes.randomArgs(k.func().params());
            int last = args.length - 1;
            String[] names = {"warm", "weights", "input", "output", "all", "all+temps", "temps"};
            for (int i = 0; i < 50; i++) k.call(args);
            System.out.println("task " + t.id() + " heap temporaries " + k.heapTemporaries());
            for (int round = 0; round < 3; round++) {
                StringBuilder sb = new StringBuilder(String.format("task %d tuned %.3f |", t.id(), best.seconds() * 1e3));
                for (int mode = 0; mode < names.length; mode++) {
                    double[] s = new double[200];
                    for (int i = 0; i < s.length; i++) {
                        for (int j = 0; j <= last; j++) {
                            boolean evict = switch (mode) {
                                case 1 -> j > 0 && j < last;
                                case 2 -> j == 0;
                                case 3 -> j == last;
                                case 4, 5 -> true;
                                default -> false;
                            };
                            if (evict) ev.evict(args[j].segment());
                        }
                        if (mode >= 5) for (long b : k.heapTemporaries()) ev.evictTemporaries(b);
                        long t0 = System.nanoTime();
                        k.call(args);
                        s[i] = (System.nanoTime() - t0) / 1e6;
                    }
                    Arrays.sort(s);
                    sb.append(String.format(" %s %.3f", names[mode], s[100]));
                }
                System.out.println(sb);
            }
        }
    }
}
