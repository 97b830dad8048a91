package dev.kiln.autoschedule.network;

import dev.kiln.autoschedule.tune.AutoSchedule;
import dev.kiln.runtime.NDArray;
import dev.kiln.target.Backend;
import dev.kiln.target.CacheEviction;
import dev.kiln.target.CompiledKernel;
import dev.kiln.target.Target;
import dev.kiln.ir.Buffer;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;

/** model log threads task [steps]: medians of 200 calls each: warm, clflush args, clflush + D MB dirty, 96 MB swept. */
public class TimeModes {
    public static void main(String[] a) throws Exception {
        Target target = Probes.target(Integer.parseInt(a[2]));
        NetworkTask t = Probes.tasks(a[0], target).get(Integer.parseInt(a[3]));
        var best = AutoSchedule.bestProgram(t.task(), Path.of(a[1]));
        dev.kiln.schedule.Schedule sch = Probes.schedule(t, best, a.length > 4 ? a[4] : null);
        WeightLayouts wl = WeightLayouts.of(t, sch);
        CompiledKernel k = AutoSchedule.compile(wl.schedule(), target, "probe");
        CacheEviction ev = Backend.forTarget(target).cacheEviction(target).orElseThrow();
        List<Buffer> ps = k.func().params();
        NDArray[] args = Probes.randomArgs(ps);
        MemorySegment dirty = Arena.ofAuto().allocate(96L << 20, 64);
        long[] sizes = {1L << 20, 2L << 20, 4L << 20, 96L << 20};
        int n = 200;
        for (int i = 0; i < 50; i++) k.call(args);
        StringBuilder sb = new StringBuilder();
        for (int round = 0; round < 3; round++) {
            sb.setLength(0);
            sb.append(String.format("task %d tuned %.3f |", t.id(), best.seconds() * 1e3));
            for (int mode = 0; mode < 2 + sizes.length; mode++) {
                double[] s = new double[n];
                for (int i = 0; i < n; i++) {
                    if (mode >= 1) for (NDArray x : args) ev.evict(x.segment());
                    if (mode >= 2) {
                        long bytes = sizes[mode - 2];
                        long v = i * 7L + round;
                        for (long off = 0; off < bytes; off += 64) dirty.set(ValueLayout.JAVA_LONG, off, v + off);
                    }
                    long t0 = System.nanoTime();
                    k.call(args);
                    s[i] = (System.nanoTime() - t0) / 1e6;
                }
                Arrays.sort(s);
                String name = mode == 0 ? "warm" : mode == 1 ? "evict" : "ev+" + (sizes[mode - 2] >> 20) + "M";
                sb.append(String.format(" %s %.3f", name, s[n / 2]));
            }
            System.out.println(sb);
        }
    }
}
