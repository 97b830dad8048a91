package dev.kiln.autoschedule.network;

import dev.kiln.autoschedule.tune.AutoSchedule;
import dev.kiln.ir.Buffer;
import dev.kiln.runtime.NDArray;
import dev.kiln.target.Backend;
import dev.kiln.target.CacheEviction;
import dev.kiln.target.CompiledKernel;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;

/** model log threads task: the log's best with its first and last argument placed at offsets 0..3 KiB past a page, warm and evicted. */
public class PlaceScan {
    public static void main(String[] a) throws Exception {
        var target = Probes.target(Integer.parseInt(a[2]));
        NetworkTask t = Probes.tasks(a[0], target).get(Integer.parseInt(a[3]));
        var best = AutoSchedule.bestProgram(t.task(), Path.of(a[1]));
        WeightLayouts wl = WeightLayouts.of(t, Probes.schedule(t, best, null));
        CompiledKernel k = AutoSchedule.compile(wl.schedule(), target, "probe");
        List<Buffer> ps = k.func().params();
        NDArray[] base = Probes.randomArgs(ps);
        Backend be = Backend.forTarget(target);
        CacheEviction ev = be.cacheEviction(target).orElseThrow();
        var pool = be.workerPool(target);
        long[] offs = {0, 1024, 2048, 3072};
        int n = 40, last = ps.size() - 1;
        for (int round = 0; round < 2; round++) {
            for (long oi : offs) {
                StringBuilder sb = new StringBuilder(String.format("in +%4d |", oi));
                for (long oo : offs) {
                    NDArray[] args = base.clone();
                    args[0] = NDArray.allocateOffset(ps.get(0), 4096 * 4 + oi);
                    args[0].copyFrom(base[0]);
                    args[last] = NDArray.allocateOffset(ps.get(last), 4096 * 4 + oo);
                    for (int i = 0; i < 5; i++) k.call(args);
                    pool.hold();
                    double[] w = new double[n], c = new double[n];
                    for (int i = 0; i < n; i++) { long t0 = System.nanoTime(); k.call(args); w[i] = (System.nanoTime() - t0) / 1e6; }
                    for (int i = 0; i < n; i++) {
                        for (NDArray x : args) ev.evict(x.segment());
                        long t0 = System.nanoTime(); k.call(args); c[i] = (System.nanoTime() - t0) / 1e6;
                    }
                    pool.release();
                    Arrays.sort(w); Arrays.sort(c);
                    sb.append(String.format("  out +%4d: %.3f %.3f", oo, w[n / 2], c[n / 2]));
                }
                System.out.println(sb);
            }
        }
    }
}
