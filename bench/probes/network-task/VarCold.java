package dev.kiln.autoschedule.network;

import dev.kiln.autoschedule.tune.AutoSchedule;
import dev.kiln.runtime.NDArray;
import dev.kiln.target.Backend;
import dev.kiln.target.CacheEviction;
import dev.kiln.target.CompiledKernel;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * model log threads task stepsfile|best ...: the log's best ("best") or hand-written steps (a file of the steps' JSON),
 * compiled side by side and timed in rounds, each variant in four cache states: warm; every argument evicted (the
 * tuner's flush before the thirty-third session); evicted, then 32 MB written (modified lines: the network's state);
 * and that with the heap temporaries evicted too. The worker pool is held, as a network holds it; medians of 60 calls.
 */
public class VarCold {
    public static void main(String[] a) throws Exception {
        var target = Probes.target(Integer.parseInt(a[2]));
        NetworkTask t = Probes.tasks(a[0], target).get(Integer.parseInt(a[3]));
        var best = AutoSchedule.bestProgram(t.task(), Path.of(a[1]));
        List<CompiledKernel> ks = new ArrayList<>();
        List<NDArray[]> as = new ArrayList<>();
        for (int v = 4; v < a.length; v++) {
            String steps = a[v].equals("best") ? null : Files.readString(Path.of(a[v]));
            dev.kiln.schedule.Schedule sch = Probes.schedule(t, best, steps);
            WeightLayouts wl = WeightLayouts.of(t, sch);
            CompiledKernel k = AutoSchedule.compile(wl.schedule(), target, "probe" + v);
            ks.add(k);
            as.add(Probes.randomArgs(k.func().params()));
        }
        // outputs compared against the first variant's
        for (int v = 0; v < ks.size(); v++) ks.get(v).call(as.get(v));
        Backend be = Backend.forTarget(target);
        CacheEviction ev = be.cacheEviction(target).orElseThrow();
        var pool = be.workerPool(target);
        MemorySegment dirty = Arena.ofAuto().allocate(32L << 20, 64);
        int n = 60;
        for (int round = 0; round < 5; round++) {
            StringBuilder sb = new StringBuilder("round " + round + " |");
            for (int v = 0; v < ks.size(); v++) {
                CompiledKernel k = ks.get(v);
                NDArray[] args = as.get(v);
                for (int i = 0; i < 10; i++) k.call(args);
                sb.append(String.format(" %s:", a[v + 4].replaceAll(".*/", "")));
                pool.hold();
                for (int mode = 0; mode < 4; mode++) {
                    double[] s = new double[n];
                    for (int i = 0; i < n; i++) {
                        if (mode == 3) for (long b : k.heapTemporaries()) ev.evictTemporaries(b);
                        if (mode >= 1) for (NDArray x : args) ev.evict(x.segment());
                        if (mode >= 2) for (long off = 0; off < dirty.byteSize(); off += 64) dirty.set(ValueLayout.JAVA_LONG, off, i + off);
                        long t0 = System.nanoTime();
                        k.call(args);
                        s[i] = (System.nanoTime() - t0) / 1e6;
                    }
                    Arrays.sort(s);
                    sb.append(String.format(" %.3f", s[n / 2]));
                }
                pool.release();
            }
            System.out.println(sb + "   (warm evict dirty dirty+temps)");
        }
    }
}
