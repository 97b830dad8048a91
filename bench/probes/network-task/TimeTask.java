package dev.kiln.autoschedule.network;

import dev.kiln.autoschedule.tune.AutoSchedule;
import dev.kiln.runtime.NDArray;
import dev.kiln.target.CompiledKernel;
import dev.kiln.target.Target;
import dev.kiln.ir.Buffer;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;

/**
 * Times one task of an ONNX network alone, fresh random arguments: six rounds of 200 calls back to back ("warm", with
 * percentiles) and 200 each after writing a 96 MB array ("swept"); with -Drealloc, new random arguments before each
 * round; with -Dasm=FILE, the kernel's optimised LLVM IR and assembly go to FILE. Arguments: model.onnx log.jsonl
 * threads task [steps-json [show]]: the log's best program, or the schedule steps given (printed lowered with a
 * sixth argument).
 */
public class TimeTask {
    public static void main(String[] a) throws Exception {
        Target target = Probes.target(Integer.parseInt(a[2]));
        NetworkTask t = Probes.tasks(a[0], target).get(Integer.parseInt(a[3]));
        var best = AutoSchedule.bestProgram(t.task(), Path.of(a[1]));
        dev.kiln.schedule.Schedule sch = Probes.schedule(t, best, a.length > 4 ? a[4] : null);
        WeightLayouts wl = WeightLayouts.of(t, sch);
        if (a.length > 5) System.out.println(dev.kiln.lower.Lowering.lower("p", wl.schedule(), target, dev.kiln.lower.Lowering.Options.defaults()));
        CompiledKernel k = AutoSchedule.compile(wl.schedule(), target, "probe");
        if (System.getProperty("asm") != null) java.nio.file.Files.writeString(Path.of(System.getProperty("asm")), k.source());
        List<Buffer> ps = k.func().params();
        NDArray[] args = Probes.randomArgs(ps);
        float[] sweep = new float[24 << 20];
        int n = 200;
        for (int i = 0; i < 50; i++) k.call(args);
        for (int round = 0; round < 6; round++) {
            if (System.getProperty("realloc") != null) {
                args = Probes.randomArgs(ps);
                for (int w = 0; w < 5; w++) k.call(args);
            }
            double[] warm = new double[n], cold = new double[n];
            for (int i = 0; i < n; i++) {
                long t0 = System.nanoTime();
                k.call(args);
                warm[i] = (System.nanoTime() - t0) / 1e6;
            }
            for (int i = 0; i < n; i++) {
                for (int j = 0; j < sweep.length; j += 16) sweep[j] += 1;
                long t0 = System.nanoTime();
                k.call(args);
                cold[i] = (System.nanoTime() - t0) / 1e6;
            }
            Arrays.sort(warm);
            Arrays.sort(cold);
            System.out.printf("  warm p10 %.3f p25 %.3f p50 %.3f p75 %.3f p90 %.3f%n", warm[n/10], warm[n/4], warm[n/2], warm[3*n/4], warm[9*n/10]);
            System.out.printf("task %d %s warm median %.4f min %.4f | swept median %.4f min %.4f (tuned %.4f)%n",
                    t.id(), t.description(), warm[n / 2], warm[0], cold[n / 2], cold[0], best.seconds() * 1e3);
        }
    }
}
