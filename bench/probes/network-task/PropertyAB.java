package dev.kiln.autoschedule.network;

import dev.kiln.autoschedule.tune.AutoSchedule;
import dev.kiln.ir.Buffer;
import dev.kiln.runtime.NDArray;
import dev.kiln.target.CompiledKernel;
import dev.kiln.target.Target;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;

/**
 * Each task's best program of a log compiled twice, with the code generator's switch PROPERTY set to "false" (the old
 * code) and unset (the new), then timed warm in alternating rounds: compile times and the kernels' medians, and their
 * ratio. Args: MODEL LOG THREADS PROPERTY (e.g. kiln.narrowCasts).
 */
public class PropertyAB {
    public static void main(String[] a) throws Exception {
        compare(a[0], a[1], Integer.parseInt(a[2]), v -> {
            if (v == 0) System.setProperty(a[3], "false");
            else System.clearProperty(a[3]);
        });
    }

    /** The comparison, {@code variant.accept(0)} before the old code's compile and {@code accept(1)} before the new. */
    static void compare(String model, String log, int threads, java.util.function.IntConsumer variant)
            throws Exception {
        Target target = Probes.target(threads);
        List<NetworkTask> tasks = Probes.tasks(model, target);
        double sumOld = 0, sumNew = 0;
        for (NetworkTask t : tasks) {
            var best = AutoSchedule.bestProgram(t.task(), Path.of(log));
            WeightLayouts wl = WeightLayouts.of(t, best.schedule());
            CompiledKernel[] k = new CompiledKernel[2];
            double[] compile = new double[2];
            for (int v = 0; v < 2; v++) {
                variant.accept(v);
                long t0 = System.nanoTime();
                k[v] = AutoSchedule.compile(wl.schedule(), target, "ab" + t.id() + "v" + v);
                compile[v] = (System.nanoTime() - t0) / 1e9;
            }
            List<Buffer> ps = k[0].func().params();
            NDArray[] args = Probes.randomArgs(ps);
            for (int v = 0; v < 2; v++) for (int i = 0; i < 30; i++) k[v].call(args);
            int n = 60;
            double[][] med = new double[2][5];
            for (int round = 0; round < 5; round++) {
                for (int v = 0; v < 2; v++) {
                    double[] ts = new double[n];
                    for (int i = 0; i < n; i++) {
                        long t0 = System.nanoTime();
                        k[v].call(args);
                        ts[i] = (System.nanoTime() - t0) / 1e6;
                    }
                    Arrays.sort(ts);
                    med[v][round] = ts[n / 2];
                }
            }
            double o = Arrays.stream(med[0]).sorted().toArray()[2], nw = Arrays.stream(med[1]).sorted().toArray()[2];
            sumOld += o * t.weight();
            sumNew += nw * t.weight();
            System.out.printf(java.util.Locale.ROOT, "%2d w%d old %.4f ms (compile %.2f s) new %.4f ms (compile %.2f s) new/old %.3f  %s%n",
                    t.id(), t.weight(), o, compile[0], nw, compile[1], nw / o, t.description());
        }
        System.out.printf(java.util.Locale.ROOT, "weighted sum: old %.3f ms new %.3f ms new/old %.3f%n", sumOld, sumNew, sumNew / sumOld);
    }
}
